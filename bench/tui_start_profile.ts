/**
 * Where the interactive start-up time goes. Runs `tern` with no task (declared flags, 100×30
 * pseudo-terminal, as bench/tui_start.ts does) with V8's CPU profiler on (`--cpu-prof`, a sample
 * about every 0.1–0.3 ms), waits for the prompt, leaves with Ctrl-D, and sums the samples from
 * the start of profiling to the first frame (the first sample inside `Screen.render`) by kind:
 * waiting (module loading), compiling, GC, the Node compatibility layer, each npm package and
 * each part of tern's src/. Prints medians over the runs; the profiler itself slows the process,
 * so read the shares, not the absolute sum. Nothing in src/ knows about it.
 *
 * Usage: deno run <permissions> bench/tui_start_profile.ts [runs=3] [main.ts of another checkout]
 */
import { join } from "node:path";
import { declaredFlags, ROOT } from "../tests/support/tern_process.ts";
import { benchEnv, inTerminal, PROMPT } from "./_pty.ts";

const RUNS = Number(Deno.args[0] ?? 3);
const MAIN = Deno.args[1] ?? join(ROOT, "main.ts");

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What a sample's time counts towards: its kind and the file or package that spent it. */
function attribute(stack: CallFrame[]): { kind: string; owner: string } {
  const leaf = stack[0]?.functionName ?? "";
  if (leaf === "(idle)") return { kind: "waiting (module loading, I/O)", owner: "" };
  if (leaf === "(program)") return { kind: "V8 compiling, native work", owner: "" };
  if (leaf === "(garbage collector)") return { kind: "garbage collection", owner: "" };
  for (const frame of stack) {
    const { url, functionName } = frame;
    if (url === "") continue;
    const npm = /node_modules\/\.deno\/([^/]+?)@/.exec(url);
    if (npm) return { kind: `npm ${npm[1]}`, owner: `npm ${npm[1]}` };
    if (
      url.startsWith("ext:deno_node") || url.startsWith("node:") ||
      functionName === "loadExtScript"
    ) {
      return { kind: "Node compatibility layer", owner: "node: builtins" };
    }
    const src = /\/(src\/[^/]+)\/(.+)$/.exec(url);
    if (src) return { kind: `tern ${src[1]}/`, owner: `${src[1]}/${src[2]} ${functionName}` };
    if (url.endsWith("/main.ts")) return { kind: "tern main.ts", owner: "main.ts" };
    return { kind: "Deno runtime", owner: url };
  }
  return { kind: "Deno runtime", owner: "(native)" };
}

/** Where the profiled time went, in ms. */
interface Summary {
  total: number;
  kinds: Map<string, number>;
  owners: Map<string, number>;
}

/** Milliseconds by kind and by owner, from the first sample to the end of the first frame. */
function summarise(profile: Profile): Summary | undefined {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const stackOf = (id: number) => {
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      stack.push(nodes.get(at)!.callFrame);
    }
    return stack;
  };
  const inFrame = (stack: CallFrame[]) =>
    stack.some((f) => f.functionName === "render" && f.url.endsWith("/tui/screen.ts"));
  const stacks = profile.samples.map(stackOf);
  const first = stacks.findIndex(inFrame);
  if (first < 0) return undefined;
  let last = first;
  while (last + 1 < stacks.length && inFrame(stacks[last + 1])) last++;
  const kinds = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  for (let i = 0; i <= last; i++) {
    const ms = profile.timeDeltas[i] / 1000;
    const { kind, owner } = attribute(stacks[i]);
    kinds.set(kind, (kinds.get(kind) ?? 0) + ms);
    if (owner !== "") owners.set(owner, (owners.get(owner) ?? 0) + ms);
    total += ms;
  }
  return { total, kinds, owners };
}

/** One profiled start: wall time to the prompt and the profile's summary. */
async function profiledStart(workspace: string, env: Record<string, string>, profile: boolean) {
  const dir = await Deno.makeTempDir({ prefix: "tern-bench-prof-" });
  try {
    const prof = profile ? ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval=100"] : [];
    const run = inTerminal([Deno.execPath(), "run", ...prof, ...declaredFlags(env), MAIN], {
      cwd: workspace,
      env,
    });
    const writer = run.child.stdin.getWriter();
    const promptAt = await run.output.seen(PROMPT);
    await writer.write(new TextEncoder().encode("\x04"));
    await writer.close();
    await run.output.done;
    await run.child.status;
    if (!profile) return undefined;
    const [file] = [...Deno.readDirSync(dir)];
    const summary = summarise(JSON.parse(await Deno.readTextFile(join(dir, file.name))));
    return summary && { wall: promptAt - run.start, ...summary };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-tui-ws-" }));
const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-tui-home-" }));
try {
  const env = { ...benchEnv(home), TERN_BASE_URL: "http://127.0.0.1:9/v1" };
  await profiledStart(workspace, env, false); // fills the Deno cache in the fresh HOME
  const runs: Array<Summary & { wall: number }> = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await profiledStart(workspace, env, true);
    if (run) runs.push(run);
  }
  if (runs.length === 0) throw new Error("No profile caught the first frame");
  const ms = (n: number) => n.toFixed(1).padStart(7);
  const table = (map: (run: Summary) => Map<string, number>, top: number) => {
    const keys = new Set(runs.flatMap((run) => [...map(run).keys()]));
    return [...keys]
      .map((key) => [key, median(runs.map((run) => map(run).get(key) ?? 0))] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, value]) => `${ms(value)}  ${key}`);
  };
  const wall = median(runs.map((run) => run.wall));
  const profiled = median(runs.map((run) => run.total));
  console.log(`${runs.length} profiled starts of ${MAIN} (medians, ms)`);
  console.log(`${ms(wall)}  spawn to prompt on screen (profiler on)`);
  console.log(`${ms(profiled)}  profiled, from the start of profiling to the first frame:`);
  console.log(table((run) => run.kinds, 20).map((line) => `  ${line}`).join("\n"));
  console.log("top files and functions among those:");
  console.log(table((run) => run.owners, 15).map((line) => `  ${line}`).join("\n"));
} finally {
  await Deno.remove(workspace, { recursive: true });
  await Deno.remove(home, { recursive: true });
}
