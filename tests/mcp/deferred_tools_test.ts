/**
 * Deferred MCP tools over the npm reference servers' real tool lists: when they are deferred,
 * what `tool_search` finds and loads, and that loading only ever appends to the tool list.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { DeferredTools, specTokens, TOOL_SEARCH_NAME } from "../../src/harness/deferred_tools.ts";
import type { McpTool } from "../../src/mcp/mcp_tool.ts";
import { createToolSearchTool } from "../../src/harness/tool_search.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { createBuiltinTools } from "../../src/tools/builtin.ts";
import {
  denoNpm,
  EVERYTHING,
  FILESYSTEM,
  referenceServersNeed,
  stdioServer,
  withManager,
} from "./_servers.ts";
import { testWith } from "../support/needs.ts";

/** The reference servers' tools, as the manager adapts them. */
async function referenceTools(): Promise<McpTool[]> {
  let tools: McpTool[] = [];
  const root = await Deno.makeTempDir({ prefix: "tern-deferred-fs-" });
  try {
    await withManager([
      stdioServer("everything", denoNpm(EVERYTHING, "stdio")),
      stdioServer("fs", denoNpm(FILESYSTEM, root)),
    ], async (manager) => {
      manager.start();
      await manager.settled();
      for (const status of manager.status()) equal(status.state, "READY", status.error);
      tools = manager.tools();
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  return tools;
}

/** Built-ins, then the MCP tools, then tool_search: the order a conversation registers them. */
function registryOf(tools: McpTool[], deferred: DeferredTools): ToolRegistry {
  const registry = new ToolRegistry(createBuiltinTools());
  for (const tool of tools) {
    registry.register({ ...tool, paths: (args) => tool.paths(args), run: tool.run });
  }
  if (deferred.update(tools)) registry.register(createToolSearchTool(deferred));
  registry.setView(deferred);
  return registry;
}

const names = (registry: ToolRegistry) => registry.specs().map((spec) => spec.name);
const signal = () => new AbortController().signal;

testWith(
  [referenceServersNeed],
  "DeferredTools.update() defers the reference servers' tools only past a tenth of the window",
  async () => {
    const tools = await referenceTools();
    const cost = specTokens(tools);
    ok(cost > 1_000, `the reference servers' schemas cost ${cost} tokens`);
    // Under the budget, and `never`: every schema is sent, and no tool_search.
    for (
      const deferred of [
        new DeferredTools("auto", cost * 10 + 10),
        new DeferredTools("never", 4_000),
      ]
    ) {
      const registry = registryOf(tools, deferred);
      equal(deferred.active, false);
      ok(!names(registry).includes(TOOL_SEARCH_NAME));
      ok(names(registry).includes("mcp__fs__read_text_file"));
    }
    // Past it, and `always`: no MCP schema, tool_search instead with an index of them all.
    for (
      const deferred of [
        new DeferredTools("auto", cost * 10 - 10),
        new DeferredTools("always", 1e6),
      ]
    ) {
      const registry = registryOf(tools, deferred);
      equal(deferred.active, true);
      const sent = names(registry);
      deepEqual(sent.filter((name) => name.startsWith("mcp__")), []);
      equal(sent.at(-1), TOOL_SEARCH_NAME);
      ok(sent.includes("read") && sent.includes("bash"), "the built-in tools stay");
      const index = registry.specs().at(-1)!.description;
      for (const tool of tools) ok(index.includes(`- ${tool.name}: `), tool.name);
      // What the index costs instead of the schemas.
      ok(specTokens(registry.specs().slice(-1)) < cost / 2);
    }
  },
);

testWith(
  [referenceServersNeed],
  "tool_search loads the tools it finds at the end of the list, once, leaving the rest as it was",
  async () => {
    const tools = await referenceTools();
    const deferred = new DeferredTools("always", 128_000);
    const registry = registryOf(tools, deferred);
    const search = registry.get(TOOL_SEARCH_NAME)!;
    const before = registry.specs();

    const found = await search.run({ query: "read text file", max_results: 2 }, {
      workspace: "/",
      signal: signal(),
    });
    equal(found.status, "SUCCEEDED");
    if (found.status === "SUCCEEDED") {
      match(found.output, /Loaded 2 tool\(s\)/);
      match(found.output, /- mcp__fs__read_text_file \(arguments: path/);
    }
    const after = registry.specs();
    // The earlier specs, tool_search's index included, are unchanged and in their places.
    deepEqual(after.slice(0, before.length), before);
    equal(after.length, before.length + 2);
    equal(after[before.length].name, "mcp__fs__read_text_file");
    // The loaded tool's full schema, as the server gave it.
    deepEqual(after[before.length].parameters, registry.get("mcp__fs__read_text_file")!.parameters);

    // A second search appends after the first; a tool found again is not added twice.
    const selected = await search.run({
      query: "select:mcp__everything__echo,mcp__fs__read_text_file,mcp__nope",
    }, { workspace: "/", signal: signal() });
    equal(selected.status, "SUCCEEDED");
    const last = registry.specs();
    deepEqual(last.slice(0, after.length), after);
    deepEqual(last.slice(after.length).map((spec) => spec.name), ["mcp__everything__echo"]);
    deepEqual(deferred.loaded.length, 3);

    const none = await search.run({ query: "zzqx" }, { workspace: "/", signal: signal() });
    equal(none.status, "SUCCEEDED");
    if (none.status === "SUCCEEDED") match(none.output, /No MCP tool matches "zzqx"/);
    deepEqual(registry.specs(), last);

    const tooMany = await search.run({ query: "file", max_results: 50 }, {
      workspace: "/",
      signal: signal(),
    });
    equal(tooMany.status, "ERROR");
  },
);

testWith(
  [referenceServersNeed],
  "DeferredTools.restore() loads again what tool_search loaded in a resumed session, in order",
  async () => {
    const tools = await referenceTools();
    const first = new DeferredTools("always", 128_000);
    const registry = registryOf(tools, first);
    const search = registry.get(TOOL_SEARCH_NAME)!;
    const messages = [];
    for (const query of ["select:mcp__fs__list_directory", "echo"]) {
      const result = await search.run({ query, max_results: 1 }, {
        workspace: "/",
        signal: signal(),
      });
      equal(result.status, "SUCCEEDED");
      if (result.status !== "SUCCEEDED") continue;
      messages.push({
        role: "tool" as const,
        toolCallId: query,
        name: TOOL_SEARCH_NAME,
        content: `SUCCEEDED\n${result.output}`,
      });
    }
    // Another tool's result naming tools loads nothing.
    messages.push({
      role: "tool" as const,
      toolCallId: "x",
      name: "bash",
      content: "- mcp__fs__write_file (x)",
    });

    const resumed = new DeferredTools("always", 128_000);
    const again = registryOf(tools, resumed);
    resumed.restore(messages);
    deepEqual(resumed.loaded, ["mcp__fs__list_directory", "mcp__everything__echo"]);
    deepEqual(names(again), names(registry));
    resumed.restore(messages);
    deepEqual(names(again), names(registry));
  },
);
