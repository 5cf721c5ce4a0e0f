/**
 * A variable name that is also a name every JavaScript object answers to (`constructor`,
 * `toString`, `__proto__`) is a variable like any other: unset unless set, never Object's own.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() reads an apiKeyEnv named like an object's own member as any variable", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", "TERN_MODEL=m\n");
    for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
      write("home/.tern/config.jsonc", JSON.stringify({ apiKeyEnv: name }));
      const { config } = await loadConfig({ cwd, env: { HOME: home }, warn: () => {} });
      assert.equal(config.apiKey, undefined, name);
      assert.equal(config.model, "m");
      // Set in .env, it is the key.
      write("cwd/.env", `TERN_MODEL=m\n${name}=sk-from-dotenv-${name.length}\n`);
      const set = await loadConfig({ cwd, env: { HOME: home }, warn: () => {} });
      assert.equal(set.config.apiKey, `sk-from-dotenv-${name.length}`, name);
      write("cwd/.env", "TERN_MODEL=m\n");
    }
  });
});
