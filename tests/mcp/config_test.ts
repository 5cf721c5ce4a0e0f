import assert from "node:assert/strict";
import { join } from "node:path";
import { loadMcpConfig } from "../../src/mcp/config.ts";
import { byName, loadError, withMcpConfig } from "./_config_fixture.ts";

const USER = "home/.tern/mcp.json";
const PROJECT_MCP = "ws/.mcp.json";
const PROJECT = "ws/.tern/mcp.json";

const stdio = (command: string) => JSON.stringify({ servers: { s: { command } } });

Deno.test("loadMcpConfig() returns nothing when no file exists", async () => {
  await withMcpConfig(async (fixture) => {
    assert.deepEqual(await fixture.load(), { servers: [], files: [] });
  });
});

Deno.test("loadMcpConfig() applies the five locations in order, later files winning", async () => {
  await withMcpConfig(async (fixture) => {
    const files = [
      fixture.write(USER, `{ "servers": { "s": { "command": "1" }, "a": { "command": "a" } } }`),
      fixture.write("home/.tern/mcp/20-b.json", stdio("3")),
      fixture.write("home/.tern/mcp/10-a.json", stdio("2")),
      fixture.write(PROJECT_MCP, `{ "mcpServers": { "t": { "command": "4" } } }`),
      fixture.write(PROJECT, `{ "servers": { "t": { "command": "5" } } }`),
      fixture.write("ws/.tern/mcp/b.json", `{ "mcpServers": { "z": { "url": "http://x/" } } }`),
      fixture.write("ws/.tern/mcp/a.json", `{ "servers": { "t": { "command": "6" } } }`),
    ];
    fixture.write("ws/.tern/mcp/notes.txt", stdio("not json"));
    fixture.write("ws/.tern/mcp/.#a.json", stdio("an editor's lock file"));
    const result = await fixture.load();
    assert.deepEqual(result.files, [
      files[0],
      files[2],
      files[1],
      files[3],
      files[4],
      files[6],
      files[5],
    ]);
    assert.deepEqual(result.servers.map((server) => server.name), ["a", "s", "t", "z"]);
    const s = byName(result.servers, "s");
    assert.equal(s.command, "3");
    assert.equal(s.file, files[1]);
    assert.equal(s.scope, "user");
    const t = byName(result.servers, "t");
    assert.equal(t.command, "6");
    assert.equal(t.file, files[6]);
    assert.equal(t.key, "servers.t");
    assert.equal(t.scope, "project");
    assert.equal(byName(result.servers, "a").scope, "user");
    assert.equal(byName(result.servers, "z").key, "mcpServers.z");

    // Each location alone still counts, in its turn.
    Deno.removeSync(files[6]);
    assert.equal(byName((await fixture.load()).servers, "t").command, "5");
    Deno.removeSync(files[4]);
    assert.equal(byName((await fixture.load()).servers, "t").command, "4");
    Deno.removeSync(files[1]);
    assert.equal(byName((await fixture.load()).servers, "s").command, "2");
  });
});

Deno.test("loadMcpConfig() never lets a project file replace the person's own server", async () => {
  await withMcpConfig(async (fixture) => {
    const own = fixture.write(USER, stdio("mine"));
    const project = fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "s": { "command": "theirs" } } }`,
    );
    const { servers, warnings } = await fixture.loadWarned();
    assert.equal(byName(servers, "s").command, "mine");
    assert.equal(byName(servers, "s").scope, "user");
    assert.deepEqual(warnings, [
      `MCP server "s" in "${project}" is not used: your own definition in "${own}" has that name`,
    ]);
  });
});

Deno.test("loadMcpConfig() lets a project file shorten a server's timeouts, never lengthen them", async () => {
  await withMcpConfig(async (fixture) => {
    const long = { startupTimeoutMs: 2147483647, requestTimeoutMs: 2147483647 };
    fixture.write(USER, JSON.stringify({ servers: { mine: { command: "m", ...long } } }));
    fixture.write(
      PROJECT_MCP,
      JSON.stringify({
        mcpServers: {
          slow: { command: "s", ...long },
          quick: { command: "q", startupTimeoutMs: 5000, timeout: 9000 },
        },
      }),
    );
    const { servers } = await fixture.load();
    const timeouts = (name: string) => {
      const server = byName(servers, name);
      return [server.startupTimeoutMs, server.requestTimeoutMs];
    };
    assert.deepEqual(timeouts("slow"), [30_000, 120_000]);
    assert.deepEqual(timeouts("quick"), [5000, 9000]);
    assert.deepEqual(timeouts("mine"), [2147483647, 2147483647]);
  });
});

Deno.test("loadMcpConfig() replaces an earlier definition whole", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "s": { "command": "a", "args": ["x"], "env": { "A": "1" } } } }`,
    );
    fixture.write(PROJECT, `{ "servers": { "s": { "url": "https://example.com/mcp" } } }`);
    const [server] = (await fixture.load()).servers;
    assert.equal(server.transport, "http");
    assert.equal(server.command, undefined);
    assert.deepEqual(server.args, []);
    assert.deepEqual(server.env, {});
  });
});

Deno.test("loadMcpConfig() fills in defaults for a minimal stdio and http server", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(
      PROJECT,
      `{ "servers": { "a": { "command": "srv" }, "b": { "url": "http://127.0.0.1:1/mcp" } } }`,
    );
    const { servers } = await fixture.load();
    const common = { file, scope: "project", headers: {}, enabled: true, startupTimeoutMs: 30000 };
    assert.deepEqual(servers[0], {
      ...common,
      name: "a",
      key: "servers.a",
      transport: "stdio",
      command: "srv",
      args: [],
      env: {},
      cwd: fixture.workspace,
      requestTimeoutMs: 120000,
      fingerprint: servers[0].fingerprint,
      // A project's server runs in bubblewrap unless the person's own file defines it.
      sandbox: { network: false, writable: [fixture.workspace] },
      files: {},
    });
    assert.deepEqual(servers[1], {
      ...common,
      name: "b",
      key: "servers.b",
      transport: "http",
      url: "http://127.0.0.1:1/mcp",
      args: [],
      env: {},
      requestTimeoutMs: 120000,
      fingerprint: servers[1].fingerprint,
    });
    assert.match(servers[0].fingerprint, /^[0-9a-f]{64}$/);
  });
});

Deno.test("loadMcpConfig() reads .mcp.json as other agents write it, ignoring their own keys", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      PROJECT_MCP,
      `{
        // Claude Code, Gemini CLI and Cline share this shape.
        "mcpServers": {
          "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "TOKEN": "\${GITHUB_TOKEN}" },
            "alwaysAllow": ["search"],
            "description": "GitHub",
            "timeout": 5000,
            "disabled": true,
          },
          "remote": { "type": "streamable-http", "url": "https://example.com/mcp",
                      "headers": { "Authorization": "Bearer \${API_TOKEN}" } },
        },
        "otherAgentSetting": 1,
      }`,
    );
    const { servers } = await fixture.load({ GITHUB_TOKEN: "gh", API_TOKEN: "tok" });
    const github = byName(servers, "github");
    assert.equal(github.transport, "stdio");
    assert.deepEqual(github.args, ["-y", "@modelcontextprotocol/server-github"]);
    assert.deepEqual(github.env, { TOKEN: "gh" });
    assert.equal(github.requestTimeoutMs, 5000);
    assert.equal(github.enabled, false);
    const remote = byName(servers, "remote");
    assert.equal(remote.transport, "http");
    assert.deepEqual(remote.headers, { Authorization: "Bearer tok" });
  });
});

Deno.test("loadMcpConfig() infers the transport from command or url", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      PROJECT,
      `{ "servers": { "a": { "command": "x" }, "b": { "url": "https://h/mcp" },
                      "c": { "type": "http", "url": "https://h/mcp" } } }`,
    );
    const { servers } = await fixture.load();
    assert.deepEqual(servers.map((server) => server.transport), ["stdio", "http", "http"]);

    const file = fixture.write(
      PROJECT,
      `{ "servers": { "a": { "command": "x", "url": "https://h/" } } }`,
    );
    let error = await loadError(fixture);
    assert.equal(
      error.message,
      `Invalid MCP config "${file}": "servers.a": both "command" and "url" are set — keep ` +
        `"command" for a stdio server or "url" for a Streamable HTTP server`,
    );
    assert.equal(error.key, "servers.a");
    assert.equal(error.file, file);

    fixture.write(PROJECT, `{ "servers": { "a": { "args": ["x"] } } }`);
    error = await loadError(fixture);
    assert.match(error.message, /"servers\.a": neither "command" nor "url" is set/);

    fixture.write(PROJECT, `{ "servers": { "a": { "type": "stdio", "url": "https://h/" } } }`);
    assert.match((await loadError(fixture)).message, /a stdio server needs "command"/);

    fixture.write(PROJECT, `{ "servers": { "a": { "url": "https://h/", "args": [] } } }`);
    error = await loadError(fixture);
    assert.match(
      error.message,
      /"servers\.a\.args": "args" does not apply to this Streamable HTTP/,
    );
  });
});

Deno.test("loadMcpConfig() expands ${VAR} and ${VAR:-default} in every expanded field", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      PROJECT,
      `{ "servers": {
        "a": { "command": "\${BIN:-/usr/bin}/srv", "args": ["--x=\${X}", "$HOME", "a$b", "\${E:-e}"],
               "env": { "K": "\${K:-}" }, "cwd": "\${SUB:-sub}" },
        "b": { "url": "\${PROTO:-https}://\${HOST}/mcp", "headers": { "A": "x \${X:-y}" } }
      } }`,
    );
    const { servers } = await fixture.load({ X: "1", HOST: "h.example", E: "" });
    const [a, b] = servers;
    assert.equal(a.command, "/usr/bin/srv");
    assert.deepEqual(a.args, ["--x=1", "$HOME", "a$b", "e"]);
    assert.deepEqual(a.env, { K: "" });
    assert.equal(a.cwd, join(fixture.workspace, "sub"));
    assert.equal(b.url, "https://h.example/mcp");
    assert.deepEqual(b.headers, { A: "x 1" });

    fixture.write(PROJECT, `{ "servers": { "a": { "command": "x", "args": ["\${1X}"] } } }`);
    assert.match(
      (await loadError(fixture)).message,
      /"servers\.a\.args\[0\]": "\$\{1X\}" is not a variable reference — write \$\{NAME\} or/,
    );
  });
});

Deno.test("loadMcpConfig() resolves cwd and sandbox paths to absolute ones", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(USER, `{ "servers": { "u": { "command": "x", "cwd": "tools" } } }`);
    fixture.write(
      "home/.tern/mcp/extra.json",
      `{ "servers": { "v": { "command": "x", "cwd": "." } } }`,
    );
    fixture.write(
      PROJECT,
      `{ "servers": {
        "p": { "command": "x", "cwd": "srv", "sandbox": true },
        "q": { "command": "x", "cwd": "tools/..", "sandbox": { "writable": ["out", "gen/.."] } },
        "r": { "command": "x", "sandbox": { "network": true } },
        "s": { "command": "x", "sandbox": false }
      } }`,
    );
    const { servers } = await fixture.load();
    const ws = fixture.workspace;
    assert.equal(byName(servers, "u").cwd, join(fixture.ternHome, "tools"));
    assert.equal(byName(servers, "v").cwd, join(fixture.ternHome, "mcp"));
    assert.equal(byName(servers, "p").cwd, join(ws, "srv"));
    assert.deepEqual(byName(servers, "p").sandbox, { network: false, writable: [ws] });
    assert.equal(byName(servers, "q").cwd, ws);
    assert.deepEqual(byName(servers, "q").sandbox, {
      network: false,
      writable: [join(ws, "out"), ws],
    });
    assert.deepEqual(byName(servers, "r").sandbox, { network: true, writable: [ws] });
    // A project file cannot turn the sandbox off, nor make a folder outside writable.
    assert.deepEqual(byName(servers, "s").sandbox, { network: false, writable: [ws] });
    const outside = fixture.write(
      PROJECT,
      `{ "servers": { "w": { "command": "x", "sandbox": { "writable": ["../home"] } } } }`,
    );
    assert.equal(
      (await loadError(fixture)).message,
      `Invalid MCP config "${outside}": "servers.w.sandbox.writable": ` +
        `${JSON.stringify(join(fixture.workspace, "..", "home"))} is outside the workspace — a ` +
        "project's server may use only folders inside it",
    );

    const file = fixture.write(
      PROJECT,
      `{ "servers": { "h": { "url": "https://h/", "sandbox": true } } }`,
    );
    assert.equal(
      (await loadError(fixture)).message,
      `Invalid MCP config "${file}": "servers.h.sandbox": "sandbox" does not apply to this ` +
        `Streamable HTTP server — remove it`,
    );
  });
});

Deno.test("loadMcpConfig() starts the person's server outside bubblewrap in its file's folder, one in bubblewrap in the workspace", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      USER,
      `{ "servers": { "host": { "command": "x" }, "boxed": { "command": "x", "sandbox": true },
        "off": { "command": "x", "sandbox": false } } }`,
    );
    fixture.write("home/.tern/mcp/extra.json", `{ "servers": { "more": { "command": "x" } } }`);
    fixture.write(PROJECT, `{ "servers": { "p": { "command": "x", "sandbox": false } } }`);
    const { servers } = await fixture.load();
    const { ternHome, workspace } = fixture;
    assert.equal(byName(servers, "host").cwd, ternHome);
    assert.equal(byName(servers, "off").cwd, ternHome);
    assert.equal(byName(servers, "more").cwd, join(ternHome, "mcp"));
    assert.equal(byName(servers, "boxed").cwd, workspace);
    assert.equal(byName(servers, "p").cwd, workspace);
  });
});

Deno.test("loadMcpConfig() starts the person's server outside bubblewrap at / when their tern home is in the workspace", async () => {
  await withMcpConfig(async (fixture) => {
    // Run in the home folder: the workspace's .tern is tern's home.
    const ternHome = join(fixture.workspace, ".tern");
    fixture.write("ws/.tern/mcp.json", `{ "servers": { "host": { "command": "x" } } }`);
    const { servers } = await loadMcpConfig({
      ternHome,
      workspace: fixture.workspace,
      env: () => undefined,
    });
    assert.equal(byName(servers, "host").scope, "user");
    assert.equal(byName(servers, "host").cwd, "/");
  });
});

Deno.test("loadMcpConfig() lists disabled servers with enabled false", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      USER,
      `{ "servers": { "a": { "command": "x", "enabled": false }, "b": { "command": "x", "disabled": true },
                      "c": { "command": "x", "disabled": false }, "d": { "command": "x" } } }`,
    );
    const { servers } = await fixture.load();
    assert.deepEqual(servers.map((server) => [server.name, server.enabled]), [
      ["a", false],
      ["b", false],
      ["c", true],
      ["d", true],
    ]);
    fixture.write(
      USER,
      `{ "servers": { "a": { "command": "x", "enabled": true, "disabled": true } } }`,
    );
    assert.match(
      (await loadError(fixture)).message,
      /"servers\.a\.disabled": contradicts "enabled" — keep one$/,
    );
  });
});

Deno.test("loadMcpConfig() fingerprints the definition as written, before expansion", async () => {
  await withMcpConfig(async (fixture) => {
    const fingerprint = async (text: string, env: Record<string, string> = {}) => {
      fixture.write(PROJECT, text);
      return (await fixture.load(env)).servers[0].fingerprint;
    };
    const base = await fingerprint(
      `{ "servers": { "a": { "command": "x", "args": ["1"], "env": { "A": "\${T}", "B": "2" } } } }`,
      { T: "one" },
    );
    const reformatted = await fingerprint(
      `// moved around\n{ "mcpServers": {\n  "a": {\n    "env": { "B": "2", "A": "\${T}" },\n` +
        `    "args": [ "1" ],\n    "command": "x",\n  },\n} }`,
      { T: "two" },
    );
    assert.equal(reformatted, base);
    const switchedOff = await fingerprint(
      `{ "servers": { "a": { "command": "x", "args": ["1"], "env": { "A": "\${T}", "B": "2" }, "enabled": false } } }`,
      { T: "one" },
    );
    assert.equal(switchedOff, base);
    const otherArgs = await fingerprint(
      `{ "servers": { "a": { "command": "x", "args": ["1", "2"], "env": { "A": "\${T}", "B": "2" } } } }`,
      { T: "one" },
    );
    assert.notEqual(otherArgs, base);

    // The same entry in a user file is a different definition: it needs no trust.
    fixture.write(
      USER,
      `{ "servers": { "b": { "command": "x", "args": ["1"], "env": { "A": "\${T}", "B": "2" } } } }`,
    );
    const user = byName((await fixture.load({ T: "one" })).servers, "b");
    assert.notEqual(user.fingerprint, otherArgs);
    assert.notEqual(user.fingerprint, base);
  });
});

Deno.test("loadMcpConfig() counts a workspace's .tern that is tern's home once, as the user's", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(USER, stdio("x"));
    const { servers, files } = await loadMcpConfig({
      ternHome: fixture.ternHome,
      workspace: join(fixture.ternHome, ".."),
      env: () => undefined,
    });
    assert.deepEqual(files, [join(fixture.ternHome, "mcp.json")]);
    assert.equal(servers[0].scope, "user");
  });
});
