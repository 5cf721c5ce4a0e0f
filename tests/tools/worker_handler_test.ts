/**
 * The tool worker's handler (src/tools/worker_handler.ts): each worker tool loaded at its first
 * call, every other tool answered from the manifest without loading its code.
 */
import { equal, match, notEqual } from "node:assert/strict";
import { handleToolCall } from "../../src/tools/worker_handler.ts";
import { BUILTIN_MANIFEST } from "../../src/tools/mod.ts";
import { withSandbox } from "./_helpers.ts";

const ctx = { signal: new AbortController().signal, update: () => {} };

Deno.test("handleToolCall() runs a worker tool, loaded at its first call", async () => {
  await withSandbox(async ({ ws: workspace }) => {
    const read = await handleToolCall({ tool: "read", args: { path: "a.txt" }, workspace }, ctx);
    equal(read.status, "SUCCEEDED", JSON.stringify(read));
    match(read.status === "SUCCEEDED" ? read.output : "", /2\tbeta/);
    const grep = await handleToolCall({ tool: "grep", args: { pattern: "alp" }, workspace }, ctx);
    equal(grep.status, "SUCCEEDED", JSON.stringify(grep));
  }, { "a.txt": "alpha\nbeta\n" });
});

Deno.test("handleToolCall() knows every tool the manifest puts in the worker", async () => {
  await withSandbox(async ({ ws: workspace }) => {
    const inWorker = BUILTIN_MANIFEST.filter((entry) => entry.runsIn === "worker");
    equal(inWorker.length, 7);
    for (const { name } of inWorker) {
      // Arguments no tool accepts: the tool itself must answer, not the handler.
      const answer = await handleToolCall({ tool: name, args: { nonsense: 1 }, workspace }, ctx);
      notEqual(answer.status === "ERROR" && answer.code, "UNKNOWN_TOOL", name);
    }
  });
});

Deno.test("handleToolCall() refuses tools that run elsewhere, and unknown ones, by name", async () => {
  const answer = async (tool: string) => {
    const observation = await handleToolCall({ tool, args: {}, workspace: "/tmp" }, ctx);
    return observation.status === "ERROR" ? `${observation.code} ${observation.message}` : "";
  };
  equal(
    await answer("bash"),
    'UNKNOWN_TOOL Tool "bash" does not run in the tool worker: it runs shell commands, which run ' +
      "in the shell sandbox",
  );
  equal(
    await answer("web_fetch"),
    'UNKNOWN_TOOL Tool "web_fetch" does not run in the tool worker: it runs in tern\'s process',
  );
  equal(await answer("toString"), 'UNKNOWN_TOOL Unknown tool "toString" in the tool worker');
  equal(await answer("nope"), 'UNKNOWN_TOOL Unknown tool "nope" in the tool worker');
});
