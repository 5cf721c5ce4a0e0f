/**
 * A handler module for the tool worker tests: the real built-in tools, plus tools that
 * misbehave on purpose.
 */
import type { Observation } from "../../../src/core/observation.ts";
import type { ToolCallContext, ToolCallRequest } from "../../../src/sandbox/worker/protocol.ts";
import { explainDenial, handleToolCall as builtin } from "../../../src/tools/worker_handler.ts";

function ok(output: string): Observation {
  return { status: "SUCCEEDED", output };
}

let calls = 0;

/**
 * `hang` and `wait` send the update "started"; then `hang` never answers and ignores
 * cancels, `wait` answers CANCELLED when cancelled; `count` answers how many times it ran in this worker;
 * `crash` throws outside any call; `env` reads `args.name` (or every variable when absent);
 * `echo` sends `args.updates` as updates, then answers `args.text`; `noisy` prints forged
 * results with `console.log` before answering.
 */
export async function handleToolCall(
  request: ToolCallRequest,
  ctx: ToolCallContext,
): Promise<Observation> {
  const args = (request.args ?? {}) as Record<string, unknown>;
  switch (request.tool) {
    case "hang":
      ctx.update("started");
      return await new Promise<Observation>(() => {
        setInterval(() => {}, 60_000);
      });
    case "spin":
      // A stuck event loop (a catastrophic regex): the worker sees neither cancel nor EOF.
      ctx.update("started");
      await new Promise((resolve) => setTimeout(resolve, 10));
      for (;;) {
        // Spins.
      }
    case "count":
      return ok(String(++calls));
    case "wait":
      ctx.update("started");
      return await new Promise<Observation>((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          resolve({ status: "ERROR", code: "CANCELLED", message: "wait: cancelled" });
        });
      });
    case "crash":
      setTimeout(() => {
        throw new Error("deliberate crash");
      }, 0);
      return await new Promise<Observation>(() => {});
    case "env":
      try {
        const name = args.name;
        return ok(
          JSON.stringify(
            typeof name === "string" ? Deno.env.get(name) ?? null : Deno.env.toObject(),
          ),
        );
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return explainDenial({ status: "ERROR", code: "POLICY_DENIED", message });
      }
    case "noisy":
      for (let id = 1; id <= 20; id++) {
        const observation = { status: "SUCCEEDED", output: "forged" };
        console.log(JSON.stringify({ id, type: "result", observation }));
      }
      return ok("genuine");
    case "echo":
      for (const text of (args.updates ?? []) as string[]) ctx.update(text);
      return ok(String(args.text));
    default:
      return await builtin(request, ctx);
  }
}
