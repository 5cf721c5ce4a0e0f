import { equal, match, notEqual } from "node:assert/strict";
import { exposedToolNames, MAX_TOOL_NAME, toolKey } from "../../src/mcp/tool_names.ts";

Deno.test("exposedToolNames() names tools mcp__server__tool", () => {
  const names = exposedToolNames([{ server: "everything", tool: "echo" }]);
  equal(names.get(toolKey("everything", "echo")), "mcp__everything__echo");
});

Deno.test("exposedToolNames() replaces characters model APIs refuse", () => {
  const names = exposedToolNames([{ server: "my.server", tool: "get/file name" }]);
  equal(names.get(toolKey("my.server", "get/file name")), "mcp__my_server__get_file_name");
});

Deno.test("exposedToolNames() cuts long names to 64 characters with a hash", () => {
  const tool = "a".repeat(80);
  const name = exposedToolNames([{ server: "s", tool }]).get(toolKey("s", tool))!;
  equal(name.length, MAX_TOOL_NAME);
  match(name, /^mcp__s__a+_[0-9a-f]{8}$/);
  const other = "a".repeat(79) + "b";
  notEqual(exposedToolNames([{ server: "s", tool: other }]).get(toolKey("s", other)), name);
});

Deno.test("exposedToolNames() settles collisions the same way whatever the order", () => {
  const a = { server: "x", tool: "get.file" };
  const b = { server: "x", tool: "get_file" };
  const one = exposedToolNames([a, b]);
  const two = exposedToolNames([b, a]);
  equal(one.get(toolKey("x", "get.file")), two.get(toolKey("x", "get.file")));
  equal(one.get(toolKey("x", "get_file")), two.get(toolKey("x", "get_file")));
  notEqual(one.get(toolKey("x", "get.file")), one.get(toolKey("x", "get_file")));
  // "get.file" sorts before "get_file", so it keeps the plain name.
  equal(one.get(toolKey("x", "get.file")), "mcp__x__get_file");
  match(one.get(toolKey("x", "get_file"))!, /^mcp__x__get_file_[0-9a-f]{8}$/);
  for (const name of one.values()) match(name, /^[A-Za-z0-9_-]{1,64}$/);
});
