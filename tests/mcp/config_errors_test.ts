import assert from "node:assert/strict";
import { loadError, withMcpConfig } from "./_config_fixture.ts";

const USER = "home/.tern/mcp.json";
const PROJECT_MCP = "ws/.mcp.json";
const PROJECT = "ws/.tern/mcp.json";

Deno.test("loadMcpConfig() rejects the legacy SSE transport", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "old": { "type": "sse", "url": "https://h/sse" } } }`,
    );
    const error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": "mcpServers.old.type": the legacy SSE transport is not ` +
        `supported — use the server's Streamable HTTP endpoint with "type": "http"`,
    );
    assert.equal(error.key, "mcpServers.old.type");
  });
});

Deno.test("loadMcpConfig() rejects unknown keys in tern's files and ignores them in .mcp.json", async () => {
  await withMcpConfig(async (fixture) => {
    const entry = `{ "mcpServers": { "x": { "command": "a", "comand": "b" } } }`;
    fixture.write(PROJECT_MCP, entry);
    assert.equal((await fixture.load()).servers[0].command, "a");

    const file = fixture.write(USER, entry);
    const error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": "mcpServers.x.comand": unknown key — known keys: "type", ` +
        `"command", "args", "env", "cwd", "url", "headers", "enabled", "disabled", ` +
        `"startupTimeoutMs", "requestTimeoutMs", "sandbox"`,
    );
    assert.equal(error.key, "mcpServers.x.comand");
    assert.deepEqual([error.line, error.column], [1, 42]);

    fixture.write(USER, `{ "server": {} }`);
    assert.match(
      (await loadError(fixture)).message,
      /"server": unknown key — known keys: "servers", "mcpServers"$/,
    );

    fixture.write(USER, `{ "servers": {}, "mcpServers": {} }`);
    assert.match(
      (await loadError(fixture)).message,
      /both "servers" and "mcpServers" are set — keep one$/,
    );
  });
});

Deno.test("loadMcpConfig() names the file and key of a value of the wrong type", async () => {
  await withMcpConfig(async (fixture) => {
    const cases: [string, string][] = [
      [
        `{ "command": "a", "args": "x" }`,
        `"servers.s.args": expected an array of strings, got "x"`,
      ],
      [`{ "command": "a", "args": ["x", 2] }`, `"servers.s.args[1]": expected a string, got 2`],
      [`{ "command": "a", "env": { "A": 1 } }`, `"servers.s.env.A": expected a string, got 1`],
      [
        `{ "command": "a", "enabled": "no" }`,
        `"servers.s.enabled": expected true or false, got "no"`,
      ],
      [
        `{ "command": "a", "startupTimeoutMs": 0 }`,
        `"servers.s.startupTimeoutMs": expected a positive number of milliseconds, got 0`,
      ],
      [
        `{ "command": "a", "requestTimeoutMs": 1.5 }`,
        `"servers.s.requestTimeoutMs": expected a whole number of milliseconds, got 1.5`,
      ],
      [
        `{ "command": "a", "sandbox": { "network": "yes" } }`,
        `"servers.s.sandbox.network": expected true or false, got "yes"`,
      ],
      [
        `{ "command": "a", "sandbox": { "net": true } }`,
        `"servers.s.sandbox.net": unknown key — known keys: "network", "writable"`,
      ],
      [`{ "url": "ftp://h/" }`, `"servers.s.url": expected an http or https URL, got "ftp://h/"`],
      [
        `{ "type": "websocket", "url": "ws://h/" }`,
        `"servers.s.type": expected "stdio", "http" or "streamable-http", got "websocket"`,
      ],
      [`[1]`, `"servers.s": expected an object, got an array`],
    ];
    for (const [entry, detail] of cases) {
      const file = fixture.write(PROJECT, `{ "servers": { "s": ${entry} } }`);
      assert.equal((await loadError(fixture)).message, `Invalid MCP config "${file}": ${detail}`);
    }
  });
});

Deno.test("loadMcpConfig() rejects a bad server name and a top level that is not an object", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(PROJECT, `{ "servers": { "my server": { "command": "a" } } }`);
    let error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": server name "my server" in "servers" is not allowed — use 1 ` +
        `to 64 letters, digits, "_", "." or "-"`,
    );
    assert.equal(error.key, `servers["my server"]`);

    fixture.write(PROJECT, `{ "servers": { "${"a".repeat(65)}": { "command": "a" } } }`);
    assert.match(
      (await loadError(fixture)).message,
      /server name "a+…" in "servers" is not allowed/,
    );

    fixture.write(PROJECT, `{ "servers": { "a.b_c-1": { "command": "a" } } }`);
    assert.equal((await fixture.load()).servers[0].key, `servers["a.b_c-1"]`);

    fixture.write(PROJECT, `["a"]`);
    error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": expected an object at the top level, got an array`,
    );
    assert.equal(error.key, "");

    fixture.write(PROJECT, `{ "servers": [] }`);
    assert.match(
      (await loadError(fixture)).message,
      /"servers": expected an object of servers by name, got an array$/,
    );
  });
});

Deno.test("loadMcpConfig() reports a syntax error with its line and column", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(
      PROJECT_MCP,
      `{\n  // comment\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}\n`,
    );
    const error = await loadError(fixture);
    assert.equal(error.message, `Invalid MCP config "${file}": line 5, column 5: expected a comma`);
    assert.deepEqual([error.file, error.line, error.column], [file, 5, 5]);
    assert.equal(typeof error.key, "string");

    // Comments, trailing commas and a file of only comments are fine.
    fixture.write(PROJECT_MCP, `{ "mcpServers": { "a": { "command": "x", }, }, } // end`);
    fixture.write(PROJECT, `// nothing here yet\n`);
    assert.equal((await fixture.load()).servers.length, 1);
  });
});

Deno.test("loadMcpConfig() names the file, key and variable of an unset ${VAR}", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "github": { "command": "gh", "env": { "TOKEN": "\${GITHUB_TOKEN}" } } } }`,
    );
    const error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": "mcpServers.github.env.TOKEN" uses \${GITHUB_TOKEN}, which ` +
        `is not set: set it, or give a default with \${GITHUB_TOKEN:-value}`,
    );
    assert.equal(error.key, "mcpServers.github.env.TOKEN");
    assert.equal((await fixture.load({ GITHUB_TOKEN: "t" })).servers[0].env.TOKEN, "t");
  });
});

Deno.test("loadMcpConfig() refuses tern's own keys in a project file, allows them in the user's", async () => {
  await withMcpConfig(async (fixture) => {
    const entry = (reference: string) =>
      `{ "mcpServers": { "x": { "command": "a", "env": { "K": "${reference}" } } } }`;
    const env = { ANTHROPIC_API_KEY: "sk-ant-secret-123456", GH_HOST: "gh-1" };
    fixture.write(PROJECT_MCP, entry("${ANTHROPIC_API_KEY}"));
    const error = await loadError(fixture, env);
    assert.match(error.message, /uses \$\{ANTHROPIC_API_KEY\}, one of tern's own settings or keys/);
    assert.ok(!error.message.includes("sk-ant-secret"));
    fixture.write(PROJECT_MCP, entry("${TERN_MODEL:-x}"));
    assert.match((await loadError(fixture, env)).message, /\$\{TERN_MODEL\}, one of tern's own/);
    // Other variables are fine in a project file, and the user's own file may pass any.
    fixture.write(PROJECT_MCP, entry("${GH_HOST}"));
    assert.equal((await fixture.load(env)).servers[0].env.K, "gh-1");
    Deno.removeSync(`${fixture.workspace}/.mcp.json`);
    fixture.write(USER, entry("${ANTHROPIC_API_KEY}"));
    assert.equal((await fixture.load(env)).servers[0].env.K, "sk-ant-secret-123456");
  });
});

Deno.test("loadMcpConfig() refuses in a project file the variables the person's settings name as keys", async () => {
  const { loadConfig } = await import("../../src/config/mod.ts");
  const { loadMcpConfig } = await import("../../src/mcp/config.ts");
  await withMcpConfig(async (fixture) => {
    // The person's settings name a provider's and a search API's key variables.
    fixture.write(
      "home/.tern/config.jsonc",
      JSON.stringify({
        providers: {
          groq: {
            api: "openai",
            baseUrl: "https://api.groq.com/openai/v1",
            apiKeyEnv: "GROQ_API_KEY",
          },
        },
        webSearch: { keyEnv: { brave: "BRAVE_API_KEY" } },
      }),
    );
    const env = {
      HOME: `${fixture.ternHome}/..`,
      GROQ_API_KEY: "gsk-person-0123456789",
      BRAVE_API_KEY: "brave-person-0123456789",
      GH_HOST: "gh-1",
    };
    const { config } = await loadConfig({ cwd: fixture.workspace, env });
    assert.deepEqual(config.keyVariables?.sort(), ["BRAVE_API_KEY", "GROQ_API_KEY"]);
    const load = () =>
      loadMcpConfig({
        ternHome: fixture.ternHome,
        workspace: fixture.workspace,
        env: (name) => env[name as keyof typeof env],
        keyVariables: config.keyVariables,
      });
    const entry = (reference: string) =>
      `{ "mcpServers": { "x": { "command": "a", "env": { "API_KEY": "${reference}" } } } }`;
    for (const name of ["GROQ_API_KEY", "BRAVE_API_KEY"]) {
      fixture.write(PROJECT_MCP, entry(`\${${name}}`));
      const error = await load().then(() => undefined, (error: Error) => error);
      assert.match(String(error?.message), new RegExp(`\\$\\{${name}\\}, one of tern's own`));
      assert.ok(!String(error?.message).includes("person-0123456789"));
    }
    // Another variable still passes; the person's own file may pass their keys.
    fixture.write(PROJECT_MCP, entry("${GH_HOST}"));
    assert.equal((await load()).servers[0].env.API_KEY, "gh-1");
    Deno.removeSync(`${fixture.workspace}/.mcp.json`);
    fixture.write(USER, entry("${GROQ_API_KEY}"));
    assert.equal((await load()).servers[0].env.API_KEY, "gsk-person-0123456789");
  });
});
