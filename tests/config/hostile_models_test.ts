/**
 * A project's `models` may describe a model (its context window, whether it takes images), never
 * price it: the cost tern shows and records for a run is what the person pays, and a repository's
 * price of 0 would show an expensive run as free.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() refuses a project's model price, naming the model; the person's is kept", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const price = { input: 0, output: 0 };
    const project = write(
      "cwd/.tern/config.jsonc",
      JSON.stringify({ models: { "gpt-4.1": { contextWindow: 50_000, price } } }),
    );
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.key, "models");
      assert.equal(error.file, project);
      assert.match(error.message, /^Refusing "models" in "[^"]+": models\.gpt-4\.1\.price /);
      return true;
    });
    // Described without a price, the project's model stays; the person may price it.
    write(
      "cwd/.tern/config.jsonc",
      JSON.stringify({ models: { "gpt-4.1": { contextWindow: 50_000 } } }),
    );
    write("home/.tern/config.jsonc", JSON.stringify({ models: { "gpt-4.1": { price } } }));
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config.models["gpt-4.1"], { contextWindow: 50_000, price });
  });
});

Deno.test("loadConfig() refuses a models name with a hidden character, as it refuses such a model", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    // Bidi override, zero-width space, line break: each reads as another name, or as two rows.
    for (const name of ["gpt-4.1\u202e", "gpt\u200b-4.1", "gpt-4.1\nx"]) {
      const project = write(
        "cwd/.tern/config.jsonc",
        `{\n  "models": {\n    ${JSON.stringify(name)}: { "contextWindow": 50000 }\n  }\n}\n`,
      );
      await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.file, project);
        assert.match(error.message, /a model name has no line break, control, bidi or invisible/);
        assert.ok(!error.message.includes("\n"), error.message);
        // At the name, where the fault is: line 3, column 5.
        assert.deepEqual([error.line, error.column], [3, 5]);
        return true;
      });
    }
  });
});
