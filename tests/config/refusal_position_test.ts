/**
 * A refused key in a project's file is told with where it is written: the line and column of
 * the key in `.tern/config.jsonc`, of the assignment in `.env`.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

async function refusal(text: string, path: string): Promise<ConfigError> {
  let caught: unknown;
  await withFixture(async ({ home, cwd, write }) => {
    write(path, text);
    try {
      await loadConfig({ cwd, env: { HOME: home } });
    } catch (error) {
      caught = error;
    }
  });
  assert.ok(caught instanceof ConfigError, `expected a ConfigError, got ${caught}`);
  return caught;
}

Deno.test("loadConfig() names the line and column of a key a project's config may not set", async () => {
  const error = await refusal(
    '// the project\'s settings\n{\n  "model": "m",\n  // comment\n    "mode": "bypass"\n}\n',
    "cwd/.tern/config.jsonc",
  );
  assert.match(error.message, /^Refusing "mode" in "[^"]+config\.jsonc": it would change /);
  assert.match(error.message, /; it is at line 5, column 5$/);
  assert.deepEqual([error.line, error.column], [5, 5]);
});

Deno.test("loadConfig() names the line and column of a value a project's config may only narrow", async () => {
  const error = await refusal(
    '{"maxRounds": 10,\n "limits": {"processes": 99999}}',
    "cwd/.tern/config.jsonc",
  );
  assert.match(error.message, /^Refusing "limits" in .*; it is at line 2, column 2$/);
  assert.deepEqual([error.line, error.column], [2, 2]);
});

Deno.test("loadConfig() names the variable, line and column of a .env setting it refuses", async () => {
  const error = await refusal(
    "TERN_MODEL=m\n# TERN_MODE=ask\n  export TERN_MODE=bypass\n",
    "cwd/.env",
  );
  assert.match(error.message, /^Refusing "mode" in "[^"]+\.env": /);
  assert.match(error.message, /; it is TERN_MODE at line 3, column 10$/);
  assert.deepEqual([error.line, error.column], [3, 10]);
});
