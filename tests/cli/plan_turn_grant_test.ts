/**
 * A plan's steps run at once and share one sandbox: a grant "for this turn" that one step is
 * given must not serve a step beside it that never asked. The step that asks waits until it
 * runs alone, and no step starts while it holds the grant. The real `tern plan`, the model and
 * reviewer a scripted server.
 */
import { ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed } from "../support/needs.ts";

const node = (id: string) => ({ id, title: `Step ${id}`, task: `Do step ${id}.`, dependsOn: [] });
/** The plan step a request is for. */
function stepOf(request: ModelRequest): string | undefined {
  const user = String(request.messages.find((m) => m.role === "user")?.content ?? "");
  return /Your step \("([^"]+)"/.exec(user)?.[1];
}
const system = (request: ModelRequest) => String(request.messages[0]?.content ?? "");
const answered = (request: ModelRequest) => request.messages.some((m) => m.role === "tool");
const toolText = (request: ModelRequest) =>
  request.messages.filter((m) => m.role === "tool").map((m) => String(m.content)).join("\n");

Deno.test({
  name: "tern plan: a step's grant for its turn serves no step running beside it",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const ws = await tempWorkspace();
    const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-plan-outside-" }));
    await Deno.writeTextFile(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
    const asked = Promise.withResolvers<void>();
    const call = (name: string, args: unknown): ScriptedReply => ({
      toolCalls: [{ id: `c-${name}`, name, arguments: JSON.stringify(args) }],
    });
    const read = call("read", { path: join(outside, "secret.txt") });
    const server = await startScriptedServer((request) => {
      if (system(request).startsWith("You are a security reviewer")) {
        return { text: JSON.stringify({ decision: "allow", reason: "ok" }) };
      }
      if (system(request).startsWith("You plan the work")) {
        return { text: JSON.stringify({ nodes: [node("a"), node("b")] }) };
      }
      const step = stepOf(request);
      const results = request.messages.filter((m) => m.role === "tool").length;
      if (step === "a") {
        // Asks for the folder for its turn, then reads it.
        if (results === 0) {
          return call("request_permissions", { reason: "need it", read: [outside], scope: "turn" });
        }
        return results === 1 ? read : { text: "a done" };
      }
      if (step === "b") return answered(request) ? { text: "b done" } : read;
      return { text: "?" };
    }, {
      chunkDelayMs: 0,
      beforeReply: async (request) => {
        const step = stepOf(request);
        if (step === "a" && !answered(request)) asked.resolve();
        // b reads once a has asked, while a's question is open.
        if (step === "b" && !answered(request)) {
          await asked.promise;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
      },
    });
    try {
      const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-plan-test-0001" };
      const run = await runTern(
        ["plan", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "auto", "go"],
        { cwd: ws.dir, env },
      );
      const requests = server.requests.map((r) => r.modelRequest);
      const of = (step: string) => requests.filter((r) => stepOf(r) === step);
      const bSaw = of("b").map(toolText).join("\n");
      ok(!bSaw.includes("OUTSIDE-SECRET"), `step b read through a's grant:\n${bSaw}`);
      const aSaw = of("a").map(toolText).join("\n");
      ok(
        aSaw.includes("OUTSIDE-SECRET"),
        `step a was not given its grant:\n${aSaw}\n${run.stderr}`,
      );
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(outside, { recursive: true });
    }
  },
});
