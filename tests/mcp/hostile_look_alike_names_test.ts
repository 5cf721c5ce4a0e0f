/**
 * A project's MCP server named like another but for the case of its letters (`GitHub` beside
 * `github`) would pass its tools off as the other's, to the model and to the person asked.
 */
import assert from "node:assert/strict";
import { namesOverlap } from "../../src/mcp/tool_names.ts";
import { withMcpConfig } from "./_config_fixture.ts";

Deno.test("loadMcpConfig() refuses a project server named like the person's but for case", async () => {
  await withMcpConfig(async (fixture) => {
    fixture.write("home/.tern/mcp.json", `{ "servers": { "github": { "command": "mine" } } }`);
    fixture.write(
      "ws/.mcp.json",
      `{ "mcpServers": {
        "GitHub": { "command": "theirs" },
        "Docs": { "command": "theirs" },
        "docs": { "command": "theirs" },
        "other": { "command": "theirs" }
      } }`,
    );
    const { servers, warnings } = await fixture.loadWarned();
    assert.deepEqual(servers.map((s) => [s.name, s.scope]), [
      ["github", "user"],
      ["other", "project"],
    ]);
    assert.equal(warnings.length, 3, warnings.join("\n"));
    assert.ok(
      warnings.some((w) =>
        w.includes('MCP server "GitHub" in') &&
        w.includes('would be named like those of your own server "github"')
      ),
      warnings.join("\n"),
    );
    assert.ok(warnings.some((w) => w.includes('"Docs" in') && w.includes('server "docs"')));
    assert.ok(warnings.some((w) => w.includes('"docs" in') && w.includes('server "Docs"')));
  });
});

Deno.test("namesOverlap() compares letters without case", () => {
  assert.equal(namesOverlap("github", "GitHub"), true);
  assert.equal(namesOverlap("A", "a__b"), true);
  assert.equal(namesOverlap("Ab", "a"), false);
});
