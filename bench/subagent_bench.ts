/**
 * Subagents (issue 24): the time from `spawn_agent` to the child's first model request, and the
 * memory of an idle child (one waiting on its model). A real `tern run` parent against a scripted
 * server on 127.0.0.1; the server's clock times both ends. Writes bench/results/subagents.md.
 *
 * Run: deno run -A bench/subagent_bench.ts [runs]
 */
import { join } from "node:path";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import type { ModelRequest } from "../src/llm/types.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { ROOT, tempWorkspace } from "../tests/support/tern_process.ts";
import { stats } from "./_stats.ts";

const RUNS = Number(Deno.args[0] ?? 7);
const IDLE_CHILDREN = 3;

const firstUser = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "");
const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");

/** One parent run spawning `children` children that hang; returns the timings and memory. */
async function run(children: number) {
  const times: number[] = [];
  let spawnReplyAt = 0;
  const idle = Promise.withResolvers<void>();
  let childRequests = 0;
  const release = Promise.withResolvers<void>();
  const script = (request: ModelRequest): ScriptedReply => {
    if (isChild(request)) return { text: "done" };
    const text = request.messages.map((m) => m.content).join("\n");
    if (!text.includes("Started subagent")) {
      spawnReplyAt = performance.now();
      return {
        toolCalls: Array.from({ length: children }, (_, i) => ({
          id: `s${i}`,
          name: "spawn_agent",
          arguments: JSON.stringify({ task_name: `t${i}`, message: `CHILD ${i}` }),
        })),
      };
    }
    const waits = text.split("[subagent ").length - 1;
    return waits < children
      ? { toolCalls: [{ id: `w${waits}`, name: "wait_agent", arguments: "{}" }] }
      : { text: "all done" };
  };
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    onRequest: (recorded) => {
      if (!isChild(recorded.modelRequest)) return;
      times.push(performance.now() - spawnReplyAt);
      if (++childRequests === children) idle.resolve();
    },
    // Children wait on their model until measured: idle children.
    beforeReply: (request) => isChild(request) ? release.promise : Promise.resolve(),
  });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "k", TERN_MAX_SUBAGENTS: "16" };
  const parent = new Deno.Command(join(ROOT, "bin", "tern"), {
    args: ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"],
    cwd: ws.dir,
    env,
    stdout: "null",
    stderr: "null",
  }).spawn();
  await idle.promise;
  const memory = childMemory(server.baseUrl);
  release.resolve();
  await parent.status;
  await server.close();
  await ws.cleanup();
  return { times, memory };
}

/** RSS and PSS (MB) of each `tern child` process of the server at `baseUrl`. */
function childMemory(baseUrl: string): Array<{ rss: number; pss: number }> {
  const out = new Deno.Command("pgrep", { args: ["-f", `child --base-url ${baseUrl}`] })
    .outputSync();
  const pids = new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
  return pids.map((pid) => {
    const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(rollup)?.[1]);
    return { rss: kb("Rss") / 1024, pss: kb("Pss") / 1024 };
  });
}

const single: number[] = [];
for (let i = 0; i < RUNS; i++) single.push(...(await run(1)).times);
const many = await run(IDLE_CHILDREN);
const latency = stats(single);
const mb = (n: number) => n.toFixed(1);
const rss = many.memory.map((m) => m.rss);
const pss = many.memory.map((m) => m.pss);
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const report = `# Subagents: spawn latency and idle memory

Measured by \`deno run -A bench/subagent_bench.ts ${RUNS}\` on ${
  new Date().toISOString().slice(0, 10)
}
(${Deno.build.os} ${Deno.build.arch}, Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores,
shared with other work). A real \`bin/tern run --mode bypass\` parent against the scripted server
on 127.0.0.1; both ends timed by the server's clock.

## spawn_agent → the child's first model request

From the server sending the reply that calls \`spawn_agent\` to the child's first request
arriving: the parent parses the reply and runs the tool (spawn record written, \`bin/tern child\`
started), the launcher computes the Deno flags, Deno starts, the child opens its session and
connects (\`openAgentSession\`), and sends its request. ${RUNS} runs, one child each.

| median | p90 | min | target |
|---|---|---|---|
| ${latency.median} ms | ${latency.p90} ms | ${latency.min} ms | ≤ 150 ms |

With ${IDLE_CHILDREN} spawned in one reply (concurrently), each child's request arrived after:
${many.times.map((t) => `${t.toFixed(0)} ms`).join(", ")}.

## Memory of an idle child

${IDLE_CHILDREN} children waiting on their model request (no tool used yet: no sandbox, no tool
worker), from /proc/<pid>/smaps_rollup:

| per child | RSS | PSS (shared pages split) |
|---|---|---|
| mean | ${mb(avg(rss))} MB | ${mb(avg(pss))} MB |
| each | ${rss.map(mb).join(", ")} MB | ${pss.map(mb).join(", ")} MB |
`;
await Deno.mkdir(join(ROOT, "bench", "results"), { recursive: true });
await Deno.writeTextFile(join(ROOT, "bench", "results", "subagents.md"), report);
console.log(report);
