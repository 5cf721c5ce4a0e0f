import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ConfigSource,
  describeConfig,
  describeSource,
  isProjectSource,
  loadConfig,
} from "../../src/config/mod.ts";
import { API_KEY_VARIABLES, DEFAULT_LIMITS } from "../../src/config/schema.ts";
import { SETTING_KEYS, settingOf } from "../../src/config/settings.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() returns the built-in defaults when nothing else is set", async () => {
  await withFixture(async ({ home, cwd }) => {
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config, {
      model: "gpt-4.1-mini",
      baseUrl: "https://api.openai.com/v1",
      maxRounds: 25,
      requestTimeoutMs: 1800000,
      idleTimeoutMs: 120000,
      bashTimeoutMs: 120000,
      ternHome: join(home, ".tern"),
      profile: ":workspace",
      mode: "ask",
      noSandbox: false,
      reviewTimeoutMs: 30000,
      autoNetwork: "reviewer",
      autoAskRules: "reviewer",
      contextWindow: 128000,
      compactAt: 0.8,
      toolResultChars: 30000,
      rewindMaxFileBytes: 10485760,
      rewindMaxFiles: 100000,
      memoryFacts: 5,
      thinking: "medium",
      maxRetries: 4,
      retryBaseMs: 500,
      fallback: [],
      mcpToolSearch: "auto",
      planConcurrency: 2,
      maxSubagents: 4,
      subagentTimeoutMs: 600000,
      subagentEscalationTimeoutMs: 300000,
      subagentPrestart: true,
      profiles: {},
      limits: DEFAULT_LIMITS,
      rules: [],
      providers: {},
      models: {},
      sandbox: {},
      webSearch: {},
      webFetch: {},
      diagnostics: {},
      apiKeys: {},
    });
    assert.deepEqual(sources.model, { layer: "default" });
    assert.equal(sources.maxTokens, undefined);
    assert.equal(sources.apiKey, undefined);
  });
});

Deno.test("loadConfig() lets each of the six layers override the one before", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const env: Record<string, string> = { HOME: home };
    const load = (flags = {}) => loadConfig({ cwd, env, flags });

    let result = await load();
    assert.equal(result.config.maxRounds, 25);
    assert.deepEqual(result.sources.maxRounds, { layer: "default" });

    const userFile = write(
      "home/.tern/config.jsonc",
      `{ "maxRounds": 9, "temperature": 0.2, "bashTimeoutMs": 2000, "idleTimeoutMs": 2000 }`,
    );
    result = await load();
    assert.equal(result.config.maxRounds, 9);
    assert.equal(result.config.idleTimeoutMs, 2000);
    assert.deepEqual(result.sources.maxRounds, { layer: "user", file: userFile });

    const projectFile = write(
      "cwd/.tern/config.jsonc",
      `{ "maxRounds": 4, "temperature": 0.3, "bashTimeoutMs": 3000 }`,
    );
    result = await load();
    // A project may only lower it (and does).
    assert.equal(result.config.maxRounds, 4);
    assert.equal(result.config.idleTimeoutMs, 2000);
    assert.deepEqual(result.sources.maxRounds, { layer: "project", file: projectFile });

    const dotenvFile = write("cwd/.env", "TERN_MAX_ROUNDS=3\nTERN_TEMPERATURE=0.4\n");
    result = await load();
    assert.equal(result.config.maxRounds, 3);
    assert.equal(result.config.bashTimeoutMs, 3000);
    assert.deepEqual(result.sources.maxRounds, {
      layer: "dotenv",
      file: dotenvFile,
      variable: "TERN_MAX_ROUNDS",
    });

    env.TERN_MAX_ROUNDS = "5";
    result = await load();
    assert.equal(result.config.maxRounds, 5);
    assert.equal(result.config.temperature, 0.4);
    assert.deepEqual(result.sources.maxRounds, { layer: "env", variable: "TERN_MAX_ROUNDS" });

    result = await load({ maxRounds: "6" });
    assert.equal(result.config.maxRounds, 6);
    assert.deepEqual(result.sources.maxRounds, { layer: "flag", flag: "--max-rounds" });
    assert.deepEqual(result.config, {
      model: "gpt-4.1-mini",
      baseUrl: "https://api.openai.com/v1",
      maxRounds: 6,
      temperature: 0.4,
      requestTimeoutMs: 1800000,
      idleTimeoutMs: 2000,
      bashTimeoutMs: 3000,
      ternHome: join(home, ".tern"),
      profile: ":workspace",
      mode: "ask",
      noSandbox: false,
      reviewTimeoutMs: 30000,
      autoNetwork: "reviewer",
      autoAskRules: "reviewer",
      contextWindow: 128000,
      compactAt: 0.8,
      toolResultChars: 30000,
      rewindMaxFileBytes: 10485760,
      rewindMaxFiles: 100000,
      memoryFacts: 5,
      thinking: "medium",
      maxRetries: 4,
      retryBaseMs: 500,
      fallback: [],
      mcpToolSearch: "auto",
      planConcurrency: 2,
      maxSubagents: 4,
      subagentTimeoutMs: 600000,
      subagentEscalationTimeoutMs: 300000,
      subagentPrestart: true,
      profiles: {},
      limits: DEFAULT_LIMITS,
      rules: [],
      providers: {},
      models: {},
      sandbox: {},
      webSearch: {},
      webFetch: {},
      diagnostics: {},
      apiKeys: {},
    });
  });
});

Deno.test("loadConfig() prefers a TERN_ variable to the OPENAI_ one in the same layer", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const env = {
      HOME: home,
      TERN_BASE_URL: "http://127.0.0.1:9/tern/",
      OPENAI_BASE_URL: "http://127.0.0.1:9/openai",
      TERN_API_KEY: "tern-key",
      OPENAI_API_KEY: "openai-key",
    };
    let { config, sources } = await loadConfig({ cwd, env });
    assert.equal(config.baseUrl, "http://127.0.0.1:9/tern");
    assert.equal(config.apiKey, "tern-key");
    assert.equal(describeSource(sources.apiKey), "TERN_API_KEY in the environment");

    ({ config, sources } = await loadConfig({
      cwd,
      env: { HOME: home, OPENAI_BASE_URL: env.OPENAI_BASE_URL, OPENAI_API_KEY: "openai-key" },
    }));
    assert.equal(config.baseUrl, "http://127.0.0.1:9/openai");
    assert.equal(config.apiKey, "openai-key");
    assert.equal(describeSource(sources.baseUrl), "OPENAI_BASE_URL in the environment");

    const dotenvFile = write(
      "cwd/.env",
      "OPENAI_API_KEY=dotenv-openai\nTERN_API_KEY=dotenv-tern\n",
    );
    ({ config, sources } = await loadConfig({ cwd, env: { HOME: home } }));
    assert.equal(config.apiKey, "dotenv-tern");
    assert.deepEqual(sources.apiKey, {
      layer: "dotenv",
      file: dotenvFile,
      variable: "TERN_API_KEY",
    });
  });
});

Deno.test("loadConfig() lets the real environment beat .env, which never changes it", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "cwd/.env",
      [
        "# comment",
        "TERN_MODEL=from-dotenv",
        "TERN_API_KEY=dotenv-key",
        "not a variable line",
        "export TERN_MAX_TOKENS=77",
        "TERN_CONFIG_TEST_PROBE=1",
        "UNRELATED=2",
      ].join("\n"),
    );
    const env = { HOME: home, TERN_MODEL: "from-env", OPENAI_API_KEY: "env-openai" };
    const { config, sources } = await loadConfig({ cwd, env });
    assert.equal(config.model, "from-env");
    assert.equal(config.maxTokens, 77);
    // The environment layer beats .env even when .env has the higher-priority variable name.
    assert.equal(config.apiKey, "env-openai");
    assert.equal(describeSource(sources.apiKey), "OPENAI_API_KEY in the environment");
    assert.deepEqual(env, { HOME: home, TERN_MODEL: "from-env", OPENAI_API_KEY: "env-openai" });
    assert.equal(Deno.env.get("TERN_CONFIG_TEST_PROBE"), undefined);
  });
});

Deno.test("loadConfig() prefers the apiKeyEnv variable to OPENAI_API_KEY, not to TERN_API_KEY", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", `{ "apiKeyEnv": "MY_PROVIDER_KEY" }`);
    let { config, sources } = await loadConfig({
      cwd,
      env: { HOME: home, MY_PROVIDER_KEY: "provider-key" },
    });
    assert.equal(config.apiKey, "provider-key");
    assert.deepEqual(sources.apiKey, { layer: "env", variable: "MY_PROVIDER_KEY" });

    ({ config } = await loadConfig({
      cwd,
      env: { HOME: home, MY_PROVIDER_KEY: "provider-key", OPENAI_API_KEY: "openai-key" },
    }));
    assert.equal(config.apiKey, "provider-key");

    ({ config } = await loadConfig({
      cwd,
      env: { HOME: home, MY_PROVIDER_KEY: "provider-key", TERN_API_KEY: "tern-key" },
    }));
    assert.equal(config.apiKey, "tern-key");

    ({ config } = await loadConfig({ cwd, env: { HOME: home } }));
    assert.equal(config.apiKey, undefined);
  });
});

Deno.test("loadConfig() reads the user config from TERN_HOME when it is set", async () => {
  await withFixture(async ({ root, home, cwd, write }) => {
    write("home/.tern/config.jsonc", `{ "model": "from-home" }`);
    const custom = write("custom/config.jsonc", `{ "model": "from-tern-home" }`);
    let { config, sources } = await loadConfig({
      cwd,
      env: { HOME: home, TERN_HOME: join(root, "custom") },
    });
    assert.equal(config.model, "from-tern-home");
    assert.equal(config.ternHome, join(root, "custom"));
    assert.deepEqual(sources.model, { layer: "user", file: custom });
    assert.deepEqual(sources.ternHome, { layer: "env", variable: "TERN_HOME" });

    ({ config } = await loadConfig({ cwd, env: {}, home }));
    assert.equal(config.model, "from-home");
  });
});

Deno.test("loadConfig() reads a config at the home directory once when cwd is home", async () => {
  await withFixture(async ({ home, write }) => {
    const file = write("home/.tern/config.jsonc", `{ "maxRounds": 9 }`);
    const { config, sources } = await loadConfig({ cwd: home, env: { HOME: home } });
    assert.equal(config.maxRounds, 9);
    assert.deepEqual(sources.maxRounds, { layer: "user", file });
  });
});

Deno.test("loadConfig() accepts comments, trailing commas and comment-only files", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", "// nothing here yet\n/* still nothing */\n");
    write(
      "cwd/.tern/config.jsonc",
      `\uFEFF{\n  // the model\n  "model": "m", /* inline */\n  "baseUrl": "https://x.test/v1/",\n}\n`,
    );
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.model, "m");
    assert.equal(config.baseUrl, "https://x.test/v1");
  });
});

Deno.test("loadConfig() ignores blank variables and undefined flags", async () => {
  await withFixture(async ({ home, cwd }) => {
    const { config } = await loadConfig({
      cwd,
      env: { HOME: home, TERN_MODEL: "", TERN_MAX_ROUNDS: "  ", TERN_API_KEY: "" },
      flags: { model: undefined, maxTokens: 12 },
    });
    assert.equal(config.model, "gpt-4.1-mini");
    assert.equal(config.maxRounds, 25);
    assert.equal(config.maxTokens, 12);
    assert.equal(config.apiKey, undefined);
  });
});

Deno.test("loadConfig() treats .env.example as documented and empty", async () => {
  const example = Deno.readTextFileSync(new URL("../../.env.example", import.meta.url));
  const names = [...API_KEY_VARIABLES, ...SETTING_KEYS.flatMap((key) => settingOf(key).env ?? [])];
  for (const name of [...names, "TERN_HOME"]) {
    assert.match(example, new RegExp(`^#? ?${name}=?`, "m"), `${name} is not documented`);
  }
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/.env", example);
    const { sources } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(
      new Set(Object.values(sources).map((source) => source.layer)),
      new Set(["default"]),
    );
  });
});

Deno.test("loadConfig() never sends the person's keys to a base URL a project chose", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const env = { HOME: home, OPENAI_API_KEY: "env-openai", ANTHROPIC_API_KEY: "env-claude" };
    const projectFile = write("cwd/.tern/config.jsonc", `{ "baseUrl": "http://evil.test/v1" }`);
    let { config, sources, withheldKeys } = await loadConfig({ cwd, env });
    assert.equal(config.baseUrl, "http://evil.test/v1");
    assert.equal(config.apiKey, undefined);
    assert.deepEqual(config.apiKeys, {});
    assert.deepEqual(withheldKeys, {
      variables: ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
      chooser: { layer: "project", file: projectFile },
    });
    const shown = describeConfig(config, sources, { withheld: withheldKeys });
    assert.match(shown, /OPENAI_API_KEY, ANTHROPIC_API_KEY in the environment not used/);
    assert.ok(shown.includes(projectFile), shown);

    // The project's own key for its own server, from the same .env, is used.
    const dotenvFile = write("cwd/.env", "TERN_BASE_URL=http://evil.test/v2\nTERN_API_KEY=own\n");
    ({ config, sources } = await loadConfig({ cwd, env }));
    assert.equal(config.baseUrl, "http://evil.test/v2");
    assert.equal(config.apiKey, "own");
    assert.deepEqual(sources.apiKey, {
      layer: "dotenv",
      file: dotenvFile,
      variable: "TERN_API_KEY",
    });
    assert.deepEqual(config.apiKeys, { TERN_API_KEY: "own" });

    // A base URL the person chose (environment or flag) gets the environment's keys as before.
    // (The environment beats .env, as everywhere.)
    ({ config } = await loadConfig({ cwd, env, flags: { baseUrl: "http://127.0.0.1:9/v1" } }));
    assert.equal(config.apiKey, "env-openai");
    assert.equal(config.apiKeys.OPENAI_API_KEY, "env-openai");
    ({ config } = await loadConfig({ cwd, env: { ...env, TERN_BASE_URL: "http://127.0.0.1:9" } }));
    assert.equal(config.apiKeys.ANTHROPIC_API_KEY, "env-claude");
  });
});

Deno.test("loadConfig() never gives the person's keys to a provider a project chose", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const env = { HOME: home, ANTHROPIC_API_KEY: "env-claude", OPENROUTER_API_KEY: "env-or" };
    const projectFile = write("cwd/.tern/config.jsonc", `{ "provider": "openrouter" }`);
    let { config, withheldKeys } = await loadConfig({ cwd, env });
    assert.equal(config.provider, "openrouter");
    assert.deepEqual(config.apiKeys, {});
    assert.deepEqual(withheldKeys, {
      variables: ["ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"],
      chooser: { layer: "project", file: projectFile },
    });

    // The same from the project's .env; its own key for its own choice is used.
    Deno.removeSync(projectFile);
    write("cwd/.env", "TERN_PROVIDER=anthropic\nANTHROPIC_API_KEY=project-own\n");
    ({ config } = await loadConfig({ cwd, env }));
    assert.equal(config.provider, "anthropic");
    assert.deepEqual(config.apiKeys, { ANTHROPIC_API_KEY: "project-own" });

    // Chosen by the person, the provider gets the person's keys.
    ({ config } = await loadConfig({ cwd, env, flags: { provider: "anthropic" } }));
    assert.equal(config.apiKeys.ANTHROPIC_API_KEY, "env-claude");
  });
});

Deno.test("loadConfig() withholds keys by the layer, whatever the project's path reads like", async () => {
  // Folders named like other layers' labels: "<x> in the environment", "command line", "user
  // config", "default". A decision that parsed the printed label could take the project's
  // .env for the environment or the project's file for the person's.
  for (
    const folder of [
      "TERN_BASE_URL in the environment",
      "command line",
      "user config ",
      "default",
    ]
  ) {
    await withFixture(async ({ root, home, write }) => {
      const cwd = join(root, folder);
      const env = { HOME: home, OPENAI_API_KEY: "env-openai" };
      const dotenvFile = write(`${folder}/.env`, "TERN_BASE_URL=http://evil.test/v1\n");
      const { config, sources, withheldKeys } = await loadConfig({ cwd, env });
      assert.equal(config.baseUrl, "http://evil.test/v1");
      assert.deepEqual(config.apiKeys, {}, folder);
      assert.equal(config.apiKey, undefined, folder);
      assert.deepEqual(sources.baseUrl, {
        layer: "dotenv",
        file: dotenvFile,
        variable: "TERN_BASE_URL",
      });
      assert.deepEqual(withheldKeys?.chooser, sources.baseUrl);

      write(`${folder}/.tern/config.jsonc`, `{ "provider": "openai" }`);
      Deno.removeSync(dotenvFile);
      const fromFile = await loadConfig({ cwd, env });
      assert.deepEqual(fromFile.config.apiKeys, {}, folder);
    });
  }
});

Deno.test("isProjectSource() is true for the project's config file and .env only", () => {
  assert.equal(isProjectSource({ layer: "project", file: "/w/.tern/config.jsonc" }), true);
  assert.equal(isProjectSource({ layer: "dotenv", file: "/w/.env", variable: "TERN_MODEL" }), true);
  const others: Array<ConfigSource | undefined> = [
    // A person's file whose path reads like a project's label is still the person's.
    { layer: "user", file: "/h/project config /w/.tern/config.jsonc" },
    { layer: "env", variable: "TERN_MODEL" },
    { layer: "flag", flag: "--model" },
    { layer: "default" },
    undefined,
  ];
  for (const source of others) {
    assert.equal(isProjectSource(source), false, JSON.stringify(source));
  }
});

Deno.test("loadConfig() reads a provider's transport and refuses one it does not know", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const provider = (transport: string) =>
      `{ "providers": { "oa": { "api": "openai-responses", "transport": "${transport}" } } }`;
    write("home/.tern/config.jsonc", provider("websocket"));
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.providers.oa?.transport, "websocket");
    write("home/.tern/config.jsonc", provider("carrier-pigeon"));
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), /transport/);
  });
});

Deno.test("loadConfig() takes the person's language servers by name, and refuses any other", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "home/.tern/config.jsonc",
      `{ "diagnostics": { "languageServers": ["deno", "gopls"] } }`,
    );
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config.diagnostics?.languageServers, ["deno", "gopls"]);

    // A name is not a program: nothing but the known servers is accepted.
    write("home/.tern/config.jsonc", `{ "diagnostics": { "languageServers": ["./evil"] } }`);
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), /languageServers/);

    // A project cannot turn one on (nor off).
    write("home/.tern/config.jsonc", "{}");
    write("cwd/.tern/config.jsonc", `{ "diagnostics": { "languageServers": ["rust-analyzer"] } }`);
    await assert.rejects(
      loadConfig({ cwd, env: { HOME: home } }),
      /diagnostics.*it names commands tern runs without asking/s,
    );
  });
});
