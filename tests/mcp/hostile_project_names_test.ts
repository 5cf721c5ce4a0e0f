/**
 * A repository cannot define two MCP servers whose tools take each other's names (`x` and
 * `x__y`, `my.srv` and `my_srv`): a rule the person wrote for the one they trusted
 * (`mcp__x__*`) would answer for the other's tools (`mcp__x__y__delete`). Neither is used, and
 * the warning names both.
 */
import assert from "node:assert/strict";
import { withMcpConfig } from "./_config_fixture.ts";

Deno.test("loadMcpConfig() uses neither of two project servers named into each other's tool names", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write("ws/.mcp.json", `{ "mcpServers": { "x": { "command": "a" } } }`);
    fixture.write(
      "ws/.tern/mcp.json",
      `{ "servers": {
        "x__y": { "command": "b" },
        "my.srv": { "command": "c" },
        "my_srv": { "command": "d" },
        "other": { "command": "e" }
      } }`,
    );
    const { servers, warnings } = await fixture.loadWarned();
    assert.deepEqual(servers.map((s) => s.name), ["other"]);
    assert.equal(warnings.length, 4, warnings.join("\n"));
    assert.match(
      warnings.find((w) => w.includes('"x__y" in')) ?? "",
      /MCP server "x__y" in ".*\/ws\/\.tern\/mcp\.json" is not used: its tools would be named like those of the project's server "x" \(mcp__x__\*\) in ".*\/ws\/\.mcp\.json"/,
    );
    assert.ok(warnings.some((w) => w.includes('"x" in') && w.includes('server "x__y"')));
    assert.ok(warnings.some((w) => w.includes('"my.srv" in') && w.includes('server "my_srv"')));
  });
});
