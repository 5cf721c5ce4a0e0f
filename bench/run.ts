/**
 * Speed benchmarks against the scripted model server, run as real processes with the declared
 * permission flags (the same as `bin/tern` and the installed shim):
 *
 * - `--version`: wall time of `deno run <flags> main.ts --version`
 * - first request: from spawning `tern run` to the model server receiving the first request
 * - per round: median gap between consecutive model requests in a 40-round tool-using turn
 *   (agent overhead: parse the stream, run a `read`, build the next request)
 * - peak memory: max RSS of that 40-round run (GNU time)
 *
 * Targets: --version ≤ 40 ms, first request ≤ 100 ms, ≤ 10 ms per round, ≤ 120 MB.
 * Writes bench/results/latest.json and bench/results/latest.md. Usage: deno task bench [runs]
 */
import { join } from "node:path";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { declaredFlags, ROOT } from "../tests/support/tern_process.ts";

const RUNS = Number(Deno.args[0] ?? 15);
const ROUNDS = 40;

const deno = Deno.execPath();

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Wall times of `deno <args>` over RUNS runs after two warm-up runs. */
async function timeDeno(args: string[]): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = performance.now();
    const out = await new Deno.Command(deno, { args, stdout: "null" }).output();
    if (!out.success) throw new Error(`deno ${args.join(" ")} failed`);
    if (i >= 2) times.push(performance.now() - start);
  }
  return times;
}

interface TurnTiming {
  spawnToFirstRequest: number;
  gaps: number[];
  maxRssKb: number;
}

/** Runs `tern run` against a fresh scripted server; `rounds` tool rounds, then an answer. */
async function timeTurn(rounds: number, workspace: string, home: string): Promise<TurnTiming> {
  const arrivals: number[] = [];
  const script = (_request: unknown, index: number): ScriptedReply => {
    arrivals.push(performance.now());
    if (index < rounds) {
      return {
        toolCalls: [{ id: `c${index}`, name: "read", arguments: '{"path":"notes.txt"}' }],
      };
    }
    return { text: "done" };
  };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  try {
    const start = performance.now();
    const child = new Deno.Command("/usr/bin/time", {
      args: [
        "-f",
        "MAXRSS %M",
        deno,
        "run",
        ...declaredFlags({ TERN_HOME: home, HOME: home }),
        join(ROOT, "main.ts"),
        "run",
        "--base-url",
        server.baseUrl,
        "--model",
        "bench",
        "--max-rounds",
        String(rounds + 1),
        "--output",
        "json",
        "read notes.txt repeatedly",
      ],
      cwd: workspace,
      env: { TERN_HOME: home, HOME: home, PATH: Deno.env.get("PATH") ?? "" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = await child;
    const stderr = new TextDecoder().decode(out.stderr);
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    if (result.exitReason !== "COMPLETED") {
      throw new Error(`bench turn ended ${result.exitReason}: ${result.error}\n${stderr}`);
    }
    const rss = Number(/MAXRSS (\d+)/.exec(stderr)?.[1] ?? NaN);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]);
    return { spawnToFirstRequest: arrivals[0] - start, gaps, maxRssKb: rss };
  } finally {
    await server.close();
  }
}

const workspace = await Deno.makeTempDir({ prefix: "tern-bench-ws-" });
const home = await Deno.makeTempDir({ prefix: "tern-bench-home-" });
try {
  await Deno.writeTextFile(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
  // The floor on this machine: Deno starting an empty script.
  await Deno.writeTextFile(join(workspace, "empty.js"), "");
  const bare = await timeDeno(["run", "--no-config", join(workspace, "empty.js")]);
  const version = await timeDeno([
    "run",
    ...declaredFlags({ TERN_HOME: home, HOME: home }),
    join(ROOT, "main.ts"),
    "--version",
  ]);
  const first: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t = await timeTurn(0, workspace, home);
    if (i > 0) first.push(t.spawnToFirstRequest);
  }
  const long = await timeTurn(ROUNDS, workspace, home);
  const results = {
    date: new Date().toISOString(),
    deno: Deno.version.deno,
    runs: RUNS,
    bareDenoMs: round1(median(bare)),
    versionMs: round1(median(version)),
    firstRequestMs: round1(median(first)),
    perRoundMs: round1(median(long.gaps)),
    peakMemoryMb: round1(long.maxRssKb / 1024),
    targets: { versionMs: 40, firstRequestMs: 100, perRoundMs: 10, peakMemoryMb: 120 },
  };
  const rows = [
    ["bare Deno, empty script (the floor)", `${results.bareDenoMs} ms`, "—"],
    ["`tern --version`", `${results.versionMs} ms`, "≤ 40 ms"],
    ["first model request after start", `${results.firstRequestMs} ms`, "≤ 100 ms"],
    [`agent overhead per tool round (median of ${ROUNDS})`, `${results.perRoundMs} ms`, "≤ 10 ms"],
    [`peak memory (${ROUNDS}-round turn)`, `${results.peakMemoryMb} MB`, "≤ 120 MB"],
  ];
  const md = [
    `# Benchmark results (${results.date.slice(0, 10)}, Deno ${results.deno}, median of ${RUNS})`,
    "",
    "Measured by `deno task bench` on the project machine (2 cores) against the scripted model",
    "server on 127.0.0.1, with the main process's declared permission flags.",
    "",
    "| measure | result | target |",
    "| --- | --- | --- |",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
  ].join("\n");
  await Deno.mkdir(join(ROOT, "bench/results"), { recursive: true });
  await Deno.writeTextFile(
    join(ROOT, "bench/results/latest.json"),
    JSON.stringify(results, null, 2) + "\n",
  );
  await Deno.writeTextFile(join(ROOT, "bench/results/latest.md"), md);
  console.log(md);
} finally {
  await Deno.remove(workspace, { recursive: true });
  await Deno.remove(home, { recursive: true });
}
