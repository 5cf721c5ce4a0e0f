/**
 * In-process cost of one tool round of the loop: the scripted provider (no HTTP), the real
 * registry and the real `read` tool on a small file. `deno bench` reports time per round; the
 * process-level numbers (with HTTP and start-up) come from bench/run.ts.
 */
import { runTurn } from "../src/agent/loop.ts";
import { ScriptedProvider } from "../src/llm/scripted.ts";
import { ToolRegistry } from "../src/tools/registry.ts";
import { createReadTool } from "../src/tools/read.ts";

const workspace = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "tern-bench-" }));
Deno.writeTextFileSync(`${workspace}/notes.txt`, "one\ntwo\nthree\n");
const tools = new ToolRegistry([createReadTool()]);
const ROUNDS = 20;

Deno.bench(`runTurn() with ${ROUNDS} read rounds (per turn)`, async (b) => {
  const provider = new ScriptedProvider((_req, i) =>
    i < ROUNDS
      ? { toolCalls: [{ id: `c${i}`, name: "read", arguments: '{"path":"notes.txt"}' }] }
      : { text: "done" }
  );
  b.start();
  const result = await runTurn({
    messages: [{ role: "user", content: "read" }],
    provider,
    model: "bench",
    tools,
    workspace,
    emit: () => {},
    maxRounds: ROUNDS + 1,
  });
  b.end();
  if (result.exitReason !== "COMPLETED") throw new Error(result.exitReason);
});

globalThis.addEventListener("unload", () => Deno.removeSync(workspace, { recursive: true }));
