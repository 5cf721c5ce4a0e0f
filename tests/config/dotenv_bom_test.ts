/**
 * A `.env` saved with a byte order mark (Windows Notepad's "UTF-8 with BOM") reads as the same
 * file without one: the mark is not part of its first variable's name.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() reads the first variable of a .env that starts with a byte order mark", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", "\uFEFFTERN_MODEL=gpt-bom\nTERN_MAX_ROUNDS=5\n");
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.model, "gpt-bom");
    assert.equal(sources.model.layer, "dotenv");
    assert.equal(config.maxRounds, 5);
  });
});

Deno.test("loadConfig() refuses a person-only setting on a .env's first line after a byte order mark", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.env", "\uFEFFTERN_MODE=bypass\n");
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.file, file);
      assert.match(error.message, /^Refusing "mode" in /);
      return true;
    });
  });
});

Deno.test("loadConfig() gives the column of a bad value on a .env's first line as the person sees it", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", "\uFEFFTERN_MAX_ROUNDS=many\n");
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.line, 1);
      assert.equal(error.column, 1);
      return true;
    });
  });
});
