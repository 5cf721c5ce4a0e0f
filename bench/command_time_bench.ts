/**
 * What a sandboxed `bash` call costs tern when the model takes its time, as with a real one:
 * the bash scenario (10 rounds of one `echo`, then an answer) against a scripted model that
 * pauses before each chunk, timed from tern's own phase marks (`tool_start` to `tool_end`), so
 * the model's pauses are not counted. With a model that answers at once (bench/run.ts bash) the
 * rounds follow each other within milliseconds, which hides costs that come with a pause: a
 * write to a cgroup's `cgroup.procs` waits for an RCU grace period only when none came shortly
 * before (bench/results/command_costs.md).
 *
 * Run (from the repository root):
 *   deno run --no-prompt --allow-read --allow-write --allow-net=127.0.0.1 --allow-env \
 *     --allow-run --allow-sys bench/command_time_bench.ts [runs] [--pause ms] [--vs <checkout>]
 *
 * `--vs` times another checkout's `bin/tern` (an older commit, its bundle built) in turn with
 * this one and prints the per-pair ratios; without it, the results are written to
 * bench/results/command_time.md.
 */
import { join } from "node:path";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { bashScript, ROUNDS } from "./_agent_runs.ts";
import { ROOT } from "../tests/support/tern_process.ts";

interface Timing {
  /** The first bash call's tool time: the sandbox opens for it. */
  first: number;
  /** The median tool time of the calls of rounds 2..ROUNDS. */
  later: number;
}

const args = [...Deno.args];
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const pauseMs = Number(option("--pause") ?? 60);
const other = option("--vs");
const runs = Number(args[0] ?? 5);
if (!Number.isInteger(runs) || runs < 1 || !Number.isFinite(pauseMs) || pauseMs < 0) {
  console.error("usage: command_time_bench.ts [runs] [--pause ms] [--vs <checkout>]");
  Deno.exit(2);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const place = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern-command-time-" });
const workspace = join(place, "ws");
const home = join(place, "home");
await Deno.mkdir(workspace);
await Deno.mkdir(home);

/** One run of the scenario through `root`'s bin/tern; the tool times from its phase marks. */
async function timeRun(root: string): Promise<Timing> {
  const server = await startScriptedServer(bashScript(), { chunkDelayMs: pauseMs });
  const marks = join(home, "marks.jsonl");
  await Deno.remove(marks).catch(() => {});
  try {
    const out = await new Deno.Command(join(root, "bin/tern"), {
      args: [
        ...["run", "--base-url", server.baseUrl, "--model", "bench", "--mode", "bypass"],
        ...["--max-rounds", String(ROUNDS + 1), "--output", "json", "run echo, then say done"],
      ],
      cwd: workspace,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        TERN_HOME: home,
        TERN_PHASE_MARKS: marks,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`${root}/bin/tern failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    const started = new Map<number, number>();
    const took = new Map<number, number>();
    for (const line of (await Deno.readTextFile(marks)).trim().split("\n")) {
      const mark = JSON.parse(line) as { name: string; at: number; detail?: { round?: number } };
      const round = mark.detail?.round;
      if (round === undefined) continue;
      if (mark.name === "tool_start") started.set(round, mark.at);
      if (mark.name === "tool_end") took.set(round, mark.at - (started.get(round) ?? NaN));
    }
    if (took.size !== ROUNDS) throw new Error(`${root}: ${took.size} bash calls, not ${ROUNDS}`);
    const later = [...took].filter(([round]) => round >= 2).map(([, ms]) => ms);
    return { first: took.get(1)!, later: median(later) };
  } finally {
    await server.close();
  }
}

const roots = other === undefined ? [ROOT] : [ROOT, other];
const results = new Map<string, Timing[]>(roots.map((root) => [root, []]));
try {
  for (const root of roots) await timeRun(root); // warm-up: Deno's code cache, the bundle
  for (let i = 0; i < runs; i++) {
    for (const root of roots) results.get(root)!.push(await timeRun(root));
  }
} finally {
  await Deno.remove(place, { recursive: true });
}

const lines: string[] = [];
const label = (root: string) => root === ROOT ? "this checkout" : root;
for (const [root, timings] of results) {
  lines.push(
    `- ${label(root)}: first bash call ${median(timings.map((t) => t.first)).toFixed(1)} ms, ` +
      `rounds 2-${ROUNDS} ${median(timings.map((t) => t.later)).toFixed(2)} ms (median of ${runs})`,
  );
}
if (other !== undefined) {
  const mine = results.get(ROOT)!;
  const theirs = results.get(other)!;
  const ratio = (pick: (t: Timing) => number) =>
    median(mine.map((t, i) => pick(t) / pick(theirs[i]))).toFixed(3);
  lines.push(
    `- this checkout / ${other}, per pair: first call ${ratio((t) => t.first)}, later calls ${
      ratio((t) => t.later)
    }`,
  );
  console.log(lines.join("\n"));
} else {
  const text = [
    `# A sandboxed bash call's tool time with a pausing model (${new Date().toISOString()})`,
    "",
    "Generated by `bench/command_time_bench.ts " + `${runs} --pause ${pauseMs}\`` +
    ": the bash scenario through `bin/tern run --mode bypass` against a scripted model that " +
    `pauses ${pauseMs} ms before each chunk; tool time is \`tool_start\` to \`tool_end\` of ` +
    "tern's phase marks (the gate, the command in the warm shell, its result), after one " +
    "warm-up run.",
    "",
    ...lines,
    "",
  ].join("\n");
  await Deno.writeTextFile(join(ROOT, "bench/results/command_time.md"), text);
  console.log(text);
}
