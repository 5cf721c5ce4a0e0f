/**
 * A config file whose key is given twice reads as its first value to whoever reviews it (a
 * repository's pull request, the person's own long file), while JSON keeps the last. And a
 * `__proto__` key was dropped by the schema without a word. Both are refused, naming the file,
 * the key and its line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

async function refusal(cwd: string, home: string): Promise<ConfigError> {
  const error = await loadConfig({ cwd, env: { HOME: home }, warn: () => {} }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(error instanceof ConfigError, `refused: ${error}`);
  return error;
}

Deno.test("loadConfig() refuses a key given twice in a config file, at any depth", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write(
      "cwd/.tern/config.jsonc",
      `{
  // Reviewed as a deny rule; the empty list below is what JSON keeps.
  "rules": [{ "action": "deny", "tool": "bash", "command": "curl" }],
  "maxRounds": 5,
  "rules": []
}`,
    );
    const error = await refusal(cwd, home);
    assert.match(
      error.message,
      new RegExp(`"${file}": line 5, column 3: key "rules" is given twice`),
    );

    write(
      "cwd/.tern/config.jsonc",
      `{"models": {"gpt-4o": {"contextWindow": 8000, "contextWindow": 9000}}}`,
    );
    assert.match(
      (await refusal(cwd, home)).message,
      /key "contextWindow" in "models\.gpt-4o" is given twice/,
    );

    // The person's own file too: a forgotten "mode" further down would decide.
    await Deno.remove(join(cwd, ".tern"), { recursive: true });
    write("home/.tern/config.jsonc", `{"mode": "ask", "model": "a", "mode": "bypass"}`);
    assert.match(
      (await refusal(cwd, home)).message,
      /line 1, column 31: key "mode" is given twice/,
    );
  });
});

Deno.test("loadConfig() refuses a __proto__ key instead of dropping it", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.tern/config.jsonc", `{"models": {"__proto__": {"contextWindow": 5000}}}`);
    const error = await refusal(cwd, home);
    assert.match(error.message, /line 1, column 13: key "__proto__" in "models" would be dropped/);
  });
});

Deno.test("loadConfig() still reads equal keys in different objects", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "cwd/.tern/config.jsonc",
      `{"models": {"a": {"contextWindow": 8000}, "b": {"contextWindow": 8000}}, "model": "a"}`,
    );
    const { config } = await loadConfig({ cwd, env: { HOME: home }, warn: () => {} });
    assert.equal(config.model, "a");
  });
});

Deno.test("loadConfig() refuses a key given twice when an escape spells the second one", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    // Reads as "ask" to a reviewer; JSON decodes `mo\u0064e` to `mode` and keeps "bypass".
    write("home/.tern/config.jsonc", `{"mode": "ask", "mo\\u0064e": "bypass"}`);
    assert.match(
      (await refusal(cwd, home)).message,
      /line 1, column 17: key "mode" is given twice/,
    );
    await Deno.remove(join(home, ".tern"), { recursive: true });
    write("cwd/.tern/config.jsonc", `{\r\n  "maxRounds": 5,\r\n  "max\\u0052ounds": 500\r\n}`);
    assert.match(
      (await refusal(cwd, home)).message,
      /line 3, column 3: key "maxRounds" is given twice/,
    );
  });
});
