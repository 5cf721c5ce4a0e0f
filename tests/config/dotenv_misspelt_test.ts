/**
 * A `TERN_` variable in `.env` that is no setting but a letter or two from one is most likely
 * mistyped: tern says which one was meant, rather than run without it and say nothing.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() warns of a .env variable a letter or two from a setting's, naming both and the line", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write(
      "cwd/.env",
      "TERN_THINKING=low\n\nTERN_MDOEL=gpt-x\nTERN_MAX_ROUND=5\nTERN_API_KYE=k\n",
    );
    const warnings: string[] = [];
    const { config } = await loadConfig({
      cwd,
      env: { HOME: home },
      warn: (text) => warnings.push(text),
    });
    assert.equal(config.thinking, "low");
    assert.deepEqual(warnings, [
      `TERN_MDOEL in .env file "${file}" (line 3) is not a variable tern reads: did you mean ` +
      "TERN_MODEL?",
      `TERN_MAX_ROUND in .env file "${file}" (line 4) is not a variable tern reads: did you ` +
      "mean TERN_MAX_ROUNDS?",
      `TERN_API_KYE in .env file "${file}" (line 5) is not a variable tern reads: did you mean ` +
      "TERN_API_KEY?",
    ]);
  });
});

Deno.test("loadConfig() says nothing of other variables in .env", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "cwd/.env",
      "DATABASE_URL=postgres://db\nTERN_WORK_KEY=abc\nTERN_HOME_X=1\nNODE_ENV=dev\nTERN_MODEL=m\n",
    );
    const warnings: string[] = [];
    await loadConfig({ cwd, env: { HOME: home }, warn: (text) => warnings.push(text) });
    assert.deepEqual(warnings, []);
  });
});
