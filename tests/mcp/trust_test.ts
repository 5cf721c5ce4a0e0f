import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError } from "../../src/config/errors.ts";
import { loadTrust, trustServers, untrustServers } from "../../src/mcp/trust.ts";
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
