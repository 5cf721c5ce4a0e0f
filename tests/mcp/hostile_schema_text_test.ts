/**
 * What the model reads of a server's tool schema is what a person can read: text a terminal
 * draws as nothing is taken out of every string a call is not checked against (a `default`, an
 * `example`, a `$comment`, a keyword of the server's own, the name a description falls back
 * to), while what a call is checked against stays as the server wrote it.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { McpManager } from "../../src/mcp/manager.ts";
import { stdioServer, testEnv } from "./_servers.ts";
import { hostileServerCommand } from "./_hostile_server.ts";
import { asTags } from "../support/hidden_text.ts";
import { HIDDEN_ORDER } from "./_hostile_server.ts";

const TAGS = /[\u{E0000}-\u{E007F}]/u;

Deno.test("McpManager.tools() gives the model no invisible text from anywhere in a schema", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-hostile-schema-" }));
  const manager = new McpManager({
    servers: [stdioServer("ann", hostileServerCommand("annotated"))],
    trusted: () => true,
    workspace: dir,
    clientVersion: "test",
    baseEnv: testEnv(),
  });
  try {
    manager.start();
    await manager.settled();
    const [tool] = manager.tools();
    equal(tool.description, 'Tool "quiet"\n(MCP server "ann")');
    const schema = tool.parameters as Record<string, unknown>;
    equal(schema.$comment, "Internal.");
    equal(schema["x-usage"], "Call it often.");
    deepEqual(schema["x-hints"], { first: ["read it"] });
    const hidden = asTags(HIDDEN_ORDER);
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    const mode = properties.mode;
    equal(mode.default, "fast");
    deepEqual(mode.examples, ["slow", { note: "why" }]);
    // What a call is checked against stays as the server wrote it.
    deepEqual(mode.enum, [`fast${hidden}`, "slow"]);
    deepEqual(properties[`tag${hidden}`], { const: `on${hidden}` });
    const told = JSON.stringify({ ...schema, properties: { mode: { ...mode, enum: [] } } });
    ok(!TAGS.test(told), told);
    ok(!TAGS.test(tool.description));
    // The check still takes what the schema asks for, and refuses the rest.
    const signal = new AbortController().signal;
    equal((await tool.run({ mode: `fast${hidden}` }, { signal })).status, "SUCCEEDED");
    equal((await tool.run({ mode: "fast" }, { signal })).status, "ERROR");
  } finally {
    await manager.close();
    await Deno.remove(dir, { recursive: true });
  }
});
