/**
 * A mistake inside a structured key (`limits`, `rules`, `providers`, …) is told as one in a
 * plain key is: with the file's line and column, and for a misspelt key the one meant.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

async function loadError(text: string): Promise<{ error: ConfigError; file: string }> {
  let caught: unknown;
  let file = "";
  await withFixture(async ({ home, cwd, write }) => {
    file = write("home/.tern/config.jsonc", text);
    try {
      await loadConfig({ cwd, env: { HOME: home } });
    } catch (error) {
      caught = error;
    }
  });
  assert.ok(caught instanceof ConfigError, `expected a ConfigError, got ${caught}`);
  return { error: caught, file };
}

Deno.test("loadConfig() names the line and column of a wrong type inside a structured key", async () => {
  const { error, file } = await loadError('{\n  "limits": {\n    "processes": "ten"\n  }\n}\n');
  assert.match(
    error.message,
    /^Invalid config file "[^"]+": line 3, column 18: "limits\.processes": /,
  );
  assert.match(error.message, /expected number/);
  assert.equal(error.file, file);
  assert.equal(error.line, 3);
  assert.equal(error.column, 18);
});

Deno.test("loadConfig() names the line and column of a bad entry in a list of rules", async () => {
  const { error } = await loadError(
    '{\n  "rules": [\n    {"action": "deny", "tool": "bash"},\n    {"action": "alow", "tool": "bash"}\n  ]\n}\n',
  );
  assert.match(error.message, /line 4, column 16: "rules\.1\.action": /);
  assert.equal(error.line, 4);
});

Deno.test("loadConfig() points at a misspelt key inside a structured key and suggests the one meant", async () => {
  const { error } = await loadError(
    '{\n  "limits": {\n    "memoryMb": 512,\n    "proceses": 10\n  }\n}\n',
  );
  assert.match(
    error.message,
    /line 4, column 5: "limits": Unrecognized key: "proceses": did you mean "processes"\?$/,
  );
  assert.equal(error.key, "proceses");
  assert.equal(error.column, 5);
});

Deno.test("loadConfig() suggests a key inside a list entry and a record's entry", async () => {
  const rule = await loadError('{"rules": [{"action": "deny", "toool": "bash"}]}');
  assert.match(rule.error.message, /Unrecognized key: "toool": did you mean "tool"\?$/);
  assert.equal(rule.error.line, 1);
  const provider = await loadError('{"providers": {"work": {"baseUrll": "https://a.test"}}}');
  assert.match(
    provider.error.message,
    /"providers\.work": Unrecognized key: "baseUrll": did you mean "baseUrl"\?$/,
  );
});

Deno.test("loadConfig() points at the object that lacks a required field", async () => {
  const { error } = await loadError(
    '{\n  "indexEmbeddings": {"baseUrl": "https://e.test/v1"}\n}\n',
  );
  assert.match(error.message, /line 2, column 22: "indexEmbeddings\.model": /);
});

Deno.test("loadConfig() quotes no value of a structured key it refuses", async () => {
  const { error } = await loadError(
    '{"providers": {"w": {"baseUrl": "https://me:hunter2secret@a.test"}}, "limits": {"x": 1}}',
  );
  assert.ok(!error.message.includes("hunter2secret"), error.message);
});
