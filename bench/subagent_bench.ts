/**
 * Subagents (issue 24): the time from `spawn_agent` to the child's first model request, with
 * the pre-started idle child (`subagentPrestart`, the default) and without it (a child started
 * by the spawn), beside an empty `deno run` measured in the same run (the floor: absolute times
 * vary 2-4x with the machine's load); the memory and CPU of an idle child. A real `tern run`
 * parent against a scripted server on 127.0.0.1; the server's clock times both ends. Writes
 * bench/results/subagents.md.
 *
 * Run: deno run -A bench/subagent_bench.ts [runs]
 */
import { join } from "node:path";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import type { ModelRequest } from "../src/llm/types.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { ROOT, tempWorkspace } from "../tests/support/tern_process.ts";
import { type Stats, stats } from "./_stats.ts";

const RUNS = Number(Deno.args[0] ?? 7);
const IDLE_CHILDREN = 3;

const firstUser = (request: ModelRequest) =>
  String(request.messages.find((m) => m.role === "user")?.content ?? "");
const isChild = (request: ModelRequest) => firstUser(request).startsWith("CHILD");

/** The pids of the processes whose parent is `pid` (any of its threads). */
function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      const text = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/children`);
      pids.push(...text.trim().split(/\s+/).filter(Boolean).map(Number));
    }
  } catch {
    // Gone, or a thread gone meanwhile: what was read counts.
  }
  return pids;
}

/** Whether `pid` is a `tern child` started idle (TERN_CHILD_IDLE=1 in its environment). */
function startedIdle(pid: number): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0").includes("TERN_CHILD_IDLE=1");
  } catch {
    return false;
  }
}

/** CPU ticks (user + system) `pid` used so far. */
function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Resolves once `parent` has an idle child that is done loading: its CPU time unchanged over
 * 200 ms. Returns its CPU ticks over one more second of idling.
 */
async function idleChildReady(parent: number): Promise<number> {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (;;) {
    const [pid] = childrenOf(parent).filter(startedIdle);
    if (pid !== undefined) {
      try {
        const before = cpuTicks(pid);
        await pause(200);
        if (cpuTicks(pid) === before) {
          await pause(1000);
          return cpuTicks(pid) - before;
        }
      } catch {
        // Gone meanwhile: look again.
      }
    } else {
      await pause(20);
    }
  }
}

/**
 * One parent run that first spawns a warm-up child and waits for it (the first spawn_agent
 * call starts the idle child as its name streams; the host keeps one ready after each spawn),
 * then spawns `children` children that hang; returns the timings of those, memory and idle CPU.
 */
async function run(children: number, prestart: boolean) {
  const times: number[] = [];
  let spawnReplyAt = 0;
  let parentPid = 0;
  let idleTicks = -1;
  let parentRequests = 0;
  const idle = Promise.withResolvers<void>();
  let childRequests = 0;
  const release = Promise.withResolvers<void>();
  const measured = (request: ModelRequest) => firstUser(request).startsWith("CHILD m");
  const script = (request: ModelRequest): ScriptedReply => {
    if (isChild(request)) return { text: "done" };
    const step = ++parentRequests;
    const spawn = (name: string, message: string, id: string) => ({
      id,
      name: "spawn_agent",
      arguments: JSON.stringify({ task_name: name, message }),
    });
    if (step === 1) return { toolCalls: [spawn("warm", "CHILD warm", "s")] };
    if (step === 2) return { toolCalls: [{ id: "w", name: "wait_agent", arguments: "{}" }] };
    if (step === 3) {
      spawnReplyAt = performance.now();
      return {
        toolCalls: Array.from(
          { length: children },
          (_, i) => spawn(`t${i}`, `CHILD m${i}`, `s${i}`),
        ),
      };
    }
    const text = request.messages.map((m) => m.content).join("\n");
    const waits = text.split("[subagent ").length - 2;
    return waits < children
      ? { toolCalls: [{ id: `w${waits}`, name: "wait_agent", arguments: "{}" }] }
      : { text: "all done" };
  };
  const server = await startScriptedServer(script, {
    chunkDelayMs: 0,
    onRequest: (recorded) => {
      if (!measured(recorded.modelRequest)) return;
      times.push(performance.now() - spawnReplyAt);
      if (++childRequests === children) idle.resolve();
    },
    beforeReply: async (request) => {
      // The measured children wait on their model until measured: idle children.
      if (measured(request)) return await release.promise;
      // The measured spawn waits for the idle child to be ready (as in a session a while in).
      if (prestart && !isChild(request) && parentRequests === 2) {
        idleTicks = await idleChildReady(parentPid);
      }
    },
  });
  const ws = await tempWorkspace();
  const env = {
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: "k",
    TERN_MAX_SUBAGENTS: "16",
    TERN_SUBAGENT_PRESTART: prestart ? "1" : "0",
  };
  const parent = new Deno.Command(join(ROOT, "bin", "tern"), {
    args: ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"],
    cwd: ws.dir,
    env,
    stdout: "null",
    stderr: "null",
  }).spawn();
  parentPid = parent.pid;
  await idle.promise;
  const memory = childMemory(server.baseUrl);
  release.resolve();
  await parent.status;
  await server.close();
  await ws.cleanup();
  return { times, memory, idleTicks };
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

/** One empty `deno run` (the floor of any process start here), in milliseconds. */
async function emptyRun(script: string): Promise<number> {
  const start = performance.now();
  await new Deno.Command(Deno.execPath(), { args: ["run", "--quiet", script] }).output();
  return performance.now() - start;
}

const empty = await Deno.makeTempFile({ suffix: ".ts" });
const floor: number[] = [];
const warm: number[] = [];
const cold: number[] = [];
const ticks: number[] = [];
// Interleaved, so that both see the same load.
for (let i = 0; i < RUNS; i++) {
  floor.push(await emptyRun(empty));
  const prestarted = await run(1, true);
  warm.push(...prestarted.times);
  ticks.push(prestarted.idleTicks);
  cold.push(...(await run(1, false)).times);
}
await Deno.remove(empty);
const many = await run(IDLE_CHILDREN, true);
const [floorStats, warmStats, coldStats] = [stats(floor), stats(warm), stats(cold)];
const mb = (n: number) => n.toFixed(1);
const rss = many.memory.map((m) => m.rss);
const pss = many.memory.map((m) => m.pss);
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ratio = (s: Stats) => (s.median / floorStats.median).toFixed(2);
const row = (name: string, s: Stats, target: string) =>
  `| ${name} | ${s.median} ms | ${s.p90} ms | ${s.min} ms | ${ratio(s)} | ${target} |`;
const load = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
const report = `# Subagents: spawn latency and idle memory

Measured by \`deno run -A bench/subagent_bench.ts ${RUNS}\` on ${
  new Date().toISOString().slice(0, 10)
}
(${Deno.build.os} ${Deno.build.arch}, Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores,
shared with other work; load average at the end ${load}). A real \`bin/tern run --mode bypass\`
parent against the scripted server on 127.0.0.1; both ends timed by the server's clock.

## spawn_agent → the child's first model request

From the server sending the reply that calls \`spawn_agent\` to the child's first request
arriving. The parent first spawns a warm-up child and waits for it (the first \`spawn_agent\`
call starts the idle child as its name streams; the host keeps one ready after each spawn); the
measured spawn is held until the idle child is done loading (its CPU time still for 200 ms), as
in a session a while in. A session's first spawn, when its arguments stream faster than a child
loads, waits for the rest of the load (the cold row is the worst case). ${RUNS} runs each, interleaved with the empty \`deno run\`
(the floor of any process start on this machine, which varies 2-4x with its load; the ratio is
what compares between runs).

| | median | p90 | min | median / floor | target |
|---|---|---|---|---|---|
${row("pre-started child (default)", warmStats, "≤ 150 ms")}
${row("child started by the spawn (\`subagentPrestart\` off)", coldStats, "")}
${row("empty \`deno run\` (floor)", floorStats, "")}

With ${IDLE_CHILDREN} spawned in one reply (concurrently; one pre-started, the others started
then), each child's request arrived after: ${
  many.times.map((t) => `${t.toFixed(0)} ms`).join(", ")
}.

## The idle child

CPU of the idle child over one second of waiting (after it loaded), in clock ticks of
${"1/100"} s, per run: ${ticks.join(", ")}.

${IDLE_CHILDREN} children waiting on their model request plus the next idle child (no tool used
yet: no sandbox, no tool worker), from /proc/<pid>/smaps_rollup:

| per child | RSS | PSS (shared pages split) |
|---|---|---|
| mean | ${mb(avg(rss))} MB | ${mb(avg(pss))} MB |
| each | ${rss.map(mb).join(", ")} MB | ${pss.map(mb).join(", ")} MB |
`;
await Deno.mkdir(join(ROOT, "bench", "results"), { recursive: true });
await Deno.writeTextFile(join(ROOT, "bench", "results", "subagents.md"), report);
console.log(report);
