/**
 * A repository cannot have the person's allow rule, written for their own MCP server by a part
 * of its name (`mcp__git*` for `github`), answer for a project server the pattern happens to fit
 * (`gitx`): that project server is not used, and the warning names the rule. A rule naming the
 * project server whole, or every MCP tool (`mcp__*`), was written for it and leaves it be. The
 * last test is the real `tern run`, its model scripted.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import type { PermissionRule } from "../../src/config/schema.ts";
import { openMcp } from "../../src/harness/mcp_setup.ts";
import { namedInPart } from "../../src/mcp/tool_names.ts";
import { withMcpConfig } from "./_config_fixture.ts";

async function opened(rules: PermissionRule[], personal = true) {
  const warnings: string[] = [];
  let names: string[] = [];
  await withMcpConfig(async (fixture) => {
    fixture.write("home/.tern/mcp.json", `{ "servers": { "github": { "command": "gh-mcp" } } }`);
    fixture.write(
      "ws/.mcp.json",
      `{ "mcpServers": { "gitx": { "command": "x" }, "notes": { "command": "y" } } }`,
    );
    const { servers, manager } = await openMcp({
      ternHome: fixture.ternHome,
      workspace: fixture.workspace,
      rules,
      personal,
      env: () => undefined,
      warn: (text) => warnings.push(text),
    });
    names = servers.map((s) => s.name);
    await manager?.close();
  });
  return { names, warnings };
}

Deno.test("openMcp() leaves out a project server the person's allow rule for their own server fits by part of a name", async () => {
  for (const personal of [true, false]) {
    const { names, warnings } = await opened([{ action: "allow", tool: "mcp__git*" }], personal);
    assert.deepEqual(names, personal ? ["github", "notes"] : ["notes"]);
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(
      warnings[0],
      /MCP server "gitx" in ".*\/ws\/\.mcp\.json" is not used: your rule allowing "mcp__git\*" \(for your own server "github"\)/,
    );
  }
});

Deno.test("openMcp() keeps a project server that the person's rules name whole, or as every MCP tool", async () => {
  const rules: PermissionRule[] = [
    { action: "allow", tool: "mcp__gitx__*" },
    { action: "allow", tool: "mcp__*" },
    { action: "allow", tool: "mcp__github__*" },
    // Narrowing rules may answer for any server's tools: they widen nothing.
    { action: "deny", tool: "mcp__git*" },
    { action: "ask", tool: "mcp__gi*" },
    // A project's own rule: it cannot allow anything anyway.
    { action: "allow", tool: "mcp__git*", from: "/ws/.tern/config.jsonc" },
  ];
  const { names, warnings } = await opened(rules);
  assert.deepEqual(names, ["github", "gitx", "notes"]);
  assert.deepEqual(warnings, []);
});

Deno.test("namedInPart() is true only for a pattern ending inside a server's name", () => {
  assert.equal(namedInPart("mcp__git*", "gitx"), true);
  assert.equal(namedInPart("mcp__git*__read", "gitx"), true);
  assert.equal(namedInPart("mcp__gitx*", "gitx"), true);
  assert.equal(namedInPart("mcp__gitx_*", "gitx"), true);
  assert.equal(namedInPart("mcp__gitx__*", "gitx"), false);
  assert.equal(namedInPart("mcp__*", "gitx"), false);
  assert.equal(namedInPart("*", "gitx"), false);
  assert.equal(namedInPart("mcp__gitx__read", "gitx"), false);
  assert.equal(namedInPart("mcp__gh*", "gitx"), false);
});

Deno.test("tern run: a trusted project server's tools do not run under the person's rule for their own server", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-rule-names-secret" };
    await Deno.writeTextFile(
      join(ws.home, "mcp.json"),
      JSON.stringify({ servers: { github: faultServerCommand("ok") } }),
    );
    await Deno.writeTextFile(
      join(ws.dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { gitx: faultServerCommand("ok", { workspace: ws.dir }) } }),
    );
    const trust = await runTern(["mcp", "trust", "gitx"], { cwd: ws.dir, env });
    assert.equal(trust.code, 0, trust.stderr);
    // The person's rule, written for their own server (after the trust: it would refuse it).
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({ rules: [{ action: "allow", tool: "mcp__git*" }] }),
    );
    const server = await startScriptedServer([
      {
        toolCalls: [
          { id: "c1", name: "mcp__gitx__echo", arguments: '{"message":"theirs"}' },
          { id: "c2", name: "mcp__github__echo", arguments: '{"message":"mine"}' },
        ],
      },
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        ["run", "--base-url", server.baseUrl, "-m", "scripted", "-o", "json", "echo"],
        { cwd: ws.dir, env },
      );
      assert.equal(run.code, 0, run.stderr);
      const messages = server.requests[1].modelRequest.messages;
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      assert.doesNotMatch(results[0], /SUCCEEDED/);
      assert.match(results[1], /SUCCEEDED\necho: mine/);
      assert.match(
        run.stderr,
        /MCP server "gitx" in .* is not used: your rule allowing "mcp__git\*"/,
      );
    } finally {
      await server.close();
    }
  } finally {
    await ws.cleanup();
  }
});
