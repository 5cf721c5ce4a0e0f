/**
 * One bad server entry costs only that server, in the person's own files too: it is reported by
 * name and reason and the file's other servers load. A `${VAR}` tern may not read is told
 * apart from one that is not set.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { withMcpConfig } from "./_config_fixture.ts";

const USER = "home/.tern/mcp.json";
const PROJECT_MCP = "ws/.mcp.json";

/** The README's example: a stdio server and an HTTP server whose header needs DOCS_TOKEN. */
const README_SERVERS = {
  servers: {
    fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
    docs: {
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
    },
  },
};

Deno.test("loadMcpConfig() skips only the user's server whose ${VAR} is unset, naming it", async () => {
  await withMcpConfig(async (fixture) => {
    const file = fixture.write(USER, JSON.stringify(README_SERVERS));
    const { servers, warnings } = await fixture.loadWarned();
    assert.deepEqual(servers.map((server) => server.name), ["fs"]);
    assert.deepEqual(warnings, [
      `Invalid MCP config "${file}": "servers.docs.headers.Authorization" uses \${DOCS_TOKEN}, ` +
      `which is not set: set it, or give a default with \${DOCS_TOKEN:-value} — server "docs" ` +
      `is not used`,
    ]);
    const set = await fixture.loadWarned({ DOCS_TOKEN: "t" });
    assert.deepEqual(set.servers.map((server) => server.name), ["docs", "fs"]);
    assert.deepEqual(set.warnings, []);
  });
});

Deno.test("loadMcpConfig() skips only the user's invalid entry, and its name stays the user's", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write(
      USER,
      `{ "servers": { "good": { "command": "mine" }, "gh": { "command": "x", "comand": "typo" } } }`,
    );
    // A project's server may not take the name, nor the tool names, of the one that failed.
    fixture.write(
      PROJECT_MCP,
      `{ "mcpServers": { "gh": { "command": "theirs" }, "gh__x": { "command": "theirs" } } }`,
    );
    const { servers, warnings } = await fixture.loadWarned();
    assert.deepEqual(servers.map((server) => server.name), ["good"]);
    assert.equal(warnings.length, 3, warnings.join("\n"));
    assert.match(warnings[0], /"servers\.gh\.comand".* — server "gh" is not used$/);
    assert.match(warnings[1], /MCP server "gh" in .* is not used: your own definition/);
    assert.match(warnings[2], /MCP server "gh__x" in .* would be named like those of your own/);
    // Without a warn callback (a caller that cannot tell anyone), it still throws.
    await assert.rejects(fixture.load(), /servers\.gh\.comand/);
  });
});

Deno.test("tern mcp list: an unreadable ${VAR} says how to allow it, and the other servers load", async () => {
  const ws = await tempWorkspace();
  try {
    const servers = structuredClone(README_SERVERS) as Record<string, Record<string, object>>;
    // Disabled: listed without starting (no npx needed).
    servers.servers.fs = { ...servers.servers.fs, enabled: false };
    await Deno.writeTextFile(join(ws.home, "mcp.json"), JSON.stringify(servers));
    const env = { HOME: ws.home, TERN_HOME: ws.home, DOCS_TOKEN: "tok-123" };
    const denied = await runTern(["mcp", "list"], { cwd: ws.dir, env });
    assert.equal(denied.code, 0, denied.stderr);
    assert.match(denied.stdout, /^fs\s+DISABLED/m);
    assert.match(
      denied.stderr,
      /uses \$\{DOCS_TOKEN\}, which tern may not read: .* add DOCS_TOKEN to it \(comma-separated names, e\.g\. TERN_EXTRA_ENV=DOCS_TOKEN\), or give a default .* — server "docs" is not used/,
    );
    assert.ok(!denied.stderr.includes("not set"), denied.stderr);
    const unset = await runTern(["mcp", "list"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home, TERN_EXTRA_ENV: "DOCS_TOKEN" },
    });
    assert.match(unset.stderr, /uses \$\{DOCS_TOKEN\}, which is not set: set it, or give/);
  } finally {
    await ws.cleanup();
  }
});
