/**
 * A repository's `.env` sets `TERN_API_KEY` to a key of its own account. The person's provider
 * (a preset or one of theirs) takes `TERN_API_KEY` before its own variable, so the person's
 * conversation went to their provider under the repository's account, whose owner may read its
 * logs, while the person's own key in the environment went unused.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/mod.ts";
import { resolveNamedProvider } from "../../src/llm/setup.ts";
import { withFixture } from "./_fixture.ts";

const REPOSITORY_KEY = "sk-or-v1-repository0123456789";
const PERSON_KEY = "sk-or-v1-person0123456789";

async function mainKey(
  cwd: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  const { config } = await loadConfig({ cwd, env, warn: () => {} });
  const provider = resolveNamedProvider(config.provider!, config, {
    primary: true,
    baseUrl: undefined,
  });
  return provider?.apiKey;
}

Deno.test("loadConfig(): a project's .env TERN_API_KEY never stands in for the person's provider key", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", `TERN_API_KEY=${REPOSITORY_KEY}\n`);
    for (const provider of ["openrouter", "anthropic", "openai"]) {
      write("home/.tern/config.jsonc", JSON.stringify({ provider }));
      const variable = provider === "openrouter"
        ? "OPENROUTER_API_KEY"
        : provider === "anthropic"
        ? "ANTHROPIC_API_KEY"
        : "OPENAI_API_KEY";
      assert.equal(
        await mainKey(cwd, { HOME: home, [variable]: PERSON_KEY }),
        PERSON_KEY,
        `${provider}: the person's ${variable} is used`,
      );
    }
  });
});

Deno.test("loadConfig(): a .env TERN_API_KEY is still the key when the environment holds none", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", JSON.stringify({ provider: "openrouter" }));
    write("cwd/.env", `TERN_API_KEY=${REPOSITORY_KEY}\n`);
    assert.equal(await mainKey(cwd, { HOME: home }), REPOSITORY_KEY);
  });
});

Deno.test("loadConfig(): a TERN_API_KEY in the environment still comes first", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", JSON.stringify({ provider: "openrouter" }));
    write("cwd/.env", `OPENROUTER_API_KEY=${REPOSITORY_KEY}\n`);
    assert.equal(await mainKey(cwd, { HOME: home, TERN_API_KEY: PERSON_KEY }), PERSON_KEY);
  });
});
