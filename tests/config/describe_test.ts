import assert from "node:assert/strict";
import {
  ConfigError,
  describeConfig,
  loadConfig,
  projectModelNotice,
} from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

const FAKE_KEY = "sk-tern-test-DO-NOT-LEAK-7f3a9c1e5b";

Deno.test("describeConfig() prints every field and only whether the key is set", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.tern/config.jsonc", `{ "temperature": 0.5 }`);
    const env = { HOME: home, TERN_API_KEY: FAKE_KEY, OPENAI_API_KEY: FAKE_KEY };
    const { config, sources } = await loadConfig({ cwd, env, flags: { model: "flag-model" } });
    const text = describeConfig(config, sources);
    const lines = text.split("\n");
    assert.equal(lines.length, 45);
    assert.match(text, /^thinking +medium {2}\(default\)$/m);
    assert.match(text, /^fallback +not set$/m);
    assert.match(text, /^contextWindow +128000 {2}\(default\)$/m);
    assert.match(text, /^apiKey +set \(from TERN_API_KEY in the environment\)$/m);
    assert.match(text, /^model +flag-model {2}\(--model on the command line\)$/m);
    assert.match(text, /^temperature +0\.5 {2}\(project config ".+config\.jsonc"\)$/m);
    assert.match(text, /^maxTokens +not set$/m);
    assert.match(text, /^maxRounds +25 {2}\(default\)$/m);
    assert.ok(!text.includes(FAKE_KEY));
    assert.ok(!JSON.stringify(sources).includes(FAKE_KEY));

    const unset = await loadConfig({ cwd, env: { HOME: home } });
    assert.match(describeConfig(unset.config, unset.sources), /^apiKey +not set$/m);
    assert.match(describeConfig(config), /^apiKey +set$/m);
  });
});

Deno.test("loadConfig() errors never contain the API key", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const keyEnv = { HOME: home, TERN_API_KEY: FAKE_KEY, OPENAI_API_KEY: FAKE_KEY };
    const scenarios: Array<[string, () => void, Record<string, string>]> = [
      ["key in file", () => write("cwd/.tern/config.jsonc", `{"apiKey": "${FAKE_KEY}"}`), {}],
      [
        "key as apiKeyEnv",
        () => write("cwd/.tern/config.jsonc", `{"apiKeyEnv": "${FAKE_KEY}"}`),
        {},
      ],
      ["key as baseUrl", () => write("cwd/.tern/config.jsonc", `{"baseUrl": "${FAKE_KEY}"}`), {}],
      ["key under unknown name", () => write("cwd/.tern/config.jsonc", `{"k": "${FAKE_KEY}"}`), {}],
      ["syntax", () => write("cwd/.tern/config.jsonc", `{"model": "${FAKE_KEY}" "x": 1}`), {}],
      ["bad env", () => Deno.removeSync(`${cwd}/.tern`, { recursive: true }), {
        TERN_MAX_ROUNDS: "abc",
      }],
      ["key in env as base URL", () => {}, { TERN_BASE_URL: FAKE_KEY }],
      ["bare key in env as a number", () => {}, { TERN_MAX_TOKENS: FAKE_KEY.slice(3) }],
      ["bad .env", () => write("cwd/.env", `TERN_API_KEY=${FAKE_KEY}\nTERN_TEMPERATURE=hot`), {}],
      [
        ".env line without =",
        () => write("cwd/.env", `OPENAI_API_KEY ${FAKE_KEY}\nTERN_TEMPERATURE=hot`),
        {},
      ],
    ];
    for (const [name, arrange, extraEnv] of scenarios) {
      arrange();
      let caught: unknown;
      const warnings: string[] = [];
      try {
        await loadConfig({
          cwd,
          env: { ...keyEnv, ...extraEnv },
          warn: (text) => warnings.push(text),
        });
      } catch (error) {
        caught = error;
      }
      assert.ok(caught instanceof ConfigError, `${name}: expected a ConfigError`);
      const shown = [caught.message, caught.stack, caught.key, String(caught.cause), ...warnings]
        .join("\n");
      assert.ok(!shown.includes(FAKE_KEY), `${name}: the key leaked into ${caught.message}`);
    }
  });
});

Deno.test("projectModelNotice() names the model a project's file chose, and the file", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const env = { HOME: home, TERN_HOME: home, OPENAI_API_KEY: FAKE_KEY };
    write("cwd/.tern/config.jsonc", `{ "model": "gpt-4.1" }`);
    const chosen = await loadConfig({ cwd, env });
    const notice = projectModelNotice(chosen.config, chosen.sources);
    // Before: undefined, though the person's key pays for the model the repository chose.
    assert.match(
      notice ?? "",
      /^the model is gpt-4\.1, chosen by project config ".+config\.jsonc"/,
    );
    assert.match(notice ?? "", /pass --model to choose yourself/);

    // From the project's .env, named by its variable.
    write("cwd/.tern/config.jsonc", `{}`);
    write("cwd/.env", "TERN_MODEL=o3\n");
    const dotenv = await loadConfig({ cwd, env });
    assert.match(
      projectModelNotice(dotenv.config, dotenv.sources) ?? "",
      /^the model is o3, chosen by TERN_MODEL in ".+\.env"/,
    );

    // With the server the project chose too, both are named, the server first.
    write("cwd/.tern/config.jsonc", `{ "baseUrl": "https://gw.test/v1" }`);
    const both = await loadConfig({ cwd, env });
    const text = projectModelNotice(both.config, both.sources) ?? "";
    assert.match(text, /^the model's server is https:\/\/gw\.test\/v1, chosen by project config/);
    assert.match(text, /the model is o3, chosen by TERN_MODEL in ".+\.env"/);

    // The person's own choice is no project's: no notice.
    Deno.removeSync(`${cwd}/.env`);
    write("cwd/.tern/config.jsonc", `{}`);
    const own = await loadConfig({ cwd, env, flags: { model: "o3" } });
    assert.equal(projectModelNotice(own.config, own.sources), undefined);
  });
});
