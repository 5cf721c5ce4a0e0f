/**
 * Speed benchmarks against the scripted model server, run as real processes through
 * `bin/tern` (what people and the installed shim run: it works out the permission flags),
 * with the Deno cache an installed tern has:
 *
 * - `--version`: wall time of `bin/tern --version`, and of `deno run <flags> main.ts --version`
 * - first request: from spawning `bin/tern run` to the model server receiving the first request;
 *   also with a user `config.jsonc` of a few plain settings, as most people have one
 * - exit: from the request of a one-word answer (no tool call) to the process's exit
 * - per round: median gap between consecutive model requests in a 40-round tool-using turn
 *   (agent overhead: parse the stream, run a `read`, build the next request)
 * - peak memory: max RSS of that 40-round run (GNU time)
 *
 * Targets: --version ≤ 40 ms, first request ≤ 100 ms, ≤ 10 ms per round, ≤ 120 MB.
 * `tern --version` is timed both through `bin/tern` (what people run) and as `deno run main.ts`.
 * The load average (1 minute) is recorded before and after: the machine is shared.
 * Writes bench/results/latest.json and bench/results/latest.md. Usage: deno task bench [runs]
 * (or `bench/run.ts read [runs]`).
 *
 * `bench/run.ts bash [runs] [--profile <file>]` runs the `bash` scenario of issue 21 instead
 * (bench/_bash_bench.ts): 10 sandboxed `bash` rounds through tern beside the same rounds
 * through a 100-line reference agent, the interactive prompt beside an empty script, every
 * host looked up recorded; writes bench/results/ratios.md and ratios.json.
 */
import { join } from "node:path";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { declaredFlags, ROOT } from "../tests/support/tern_process.ts";

const READ_ARGS = Deno.args[0] === "read" ? Deno.args.slice(1) : Deno.args;
const RUNS = Number(READ_ARGS[0] ?? 15);
const ROUNDS = 40;

const deno = Deno.execPath();

/**
 * The Deno cache a person who installed tern has (this process's): tern's HOME is a fresh
 * directory, and without this its Deno cache would be empty on every run, so each start would
 * try (and fail, offline) to download npm metadata that a real install has already.
 */
const DENO_CACHE = {
  DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Wall time of one run of `program <args>`. */
async function timeOnce(
  args: string[],
  program = deno,
  env?: Record<string, string>,
): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(program, { args, env, stdout: "null" }).output();
  if (!out.success) throw new Error(`${program} ${args.join(" ")} failed`);
  return performance.now() - start;
}

/** Wall times of `program <args>` over RUNS runs after two warm-up runs. */
async function timeCommand(
  args: string[],
  program = deno,
  env?: Record<string, string>,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const time = await timeOnce(args, program, env);
    if (i >= 2) times.push(time);
  }
  return times;
}

/** The 1-minute load average. */
function loadAverage(): number {
  return Math.round(Deno.loadavg()[0] * 100) / 100;
}

/** A user config most people could have: a few plain settings, with comments. */
const USER_CONFIG = `// My tern settings.
{
  "model": "bench",
  "thinking": "low", // the default is medium
  "maxRounds": 50,
}
`;

interface TurnTiming {
  spawnToFirstRequest: number;
  /** From the last model request's arrival to the process's exit. */
  lastRequestToExit: number;
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
    const ternArgs = [
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
    ];
    // Through the launcher, as a person starts it: it works out the permission flags (the
    // server's host among them) and execs Deno, so `time` sees Deno's memory.
    const start = performance.now();
    const child = new Deno.Command("/usr/bin/time", {
      args: ["-f", "MAXRSS %M", join(ROOT, "bin/tern"), ...ternArgs],
      cwd: workspace,
      env: { TERN_HOME: home, HOME: home, PATH: Deno.env.get("PATH") ?? "", ...DENO_CACHE },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = await child;
    const ended = performance.now();
    const stderr = new TextDecoder().decode(out.stderr);
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    if (result.exitReason !== "COMPLETED") {
      throw new Error(`bench turn ended ${result.exitReason}: ${result.error}\n${stderr}`);
    }
    const rss = Number(/MAXRSS (\d+)/.exec(stderr)?.[1] ?? NaN);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]);
    return {
      spawnToFirstRequest: arrivals[0] - start,
      lastRequestToExit: ended - arrivals[arrivals.length - 1],
      gaps,
      maxRssKb: rss,
    };
  } finally {
    await server.close();
  }
}

/** The `read` scenario and the start-up timings above; writes latest.json and latest.md. */
async function benchRead(): Promise<void> {
  const workspace = await Deno.makeTempDir({ prefix: "tern-bench-ws-" });
  const home = await Deno.makeTempDir({ prefix: "tern-bench-home-" });
  const configuredHome = await Deno.makeTempDir({ prefix: "tern-bench-home-" });
  try {
    const loadBefore = loadAverage();
    await Deno.writeTextFile(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
    await Deno.writeTextFile(join(configuredHome, "config.jsonc"), USER_CONFIG);
    // The floor on this machine: Deno starting an empty script.
    await Deno.writeTextFile(join(workspace, "empty.js"), "");
    const launcherVersion = await timeCommand(["--version"], join(ROOT, "bin/tern"), {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: home,
    });
    const version = await timeCommand([
      "run",
      ...declaredFlags({ TERN_HOME: home, HOME: home, ...DENO_CACHE }),
      join(ROOT, "main.ts"),
      "--version",
    ]);
    const bare: number[] = [];
    const first: number[] = [];
    const firstConfigured: number[] = [];
    const exits: number[] = [];
    // Interleaved with the floor, so all three see the same load.
    for (let i = 0; i < RUNS + 1; i++) {
      const b = await timeOnce(["run", "--no-config", join(workspace, "empty.js")]);
      const t = await timeTurn(0, workspace, home);
      const c = await timeTurn(0, workspace, configuredHome);
      if (i === 0) continue;
      bare.push(b);
      first.push(t.spawnToFirstRequest);
      exits.push(t.lastRequestToExit);
      firstConfigured.push(c.spawnToFirstRequest);
    }
    const long = await timeTurn(ROUNDS, workspace, home);
    const results = {
      date: new Date().toISOString(),
      deno: Deno.version.deno,
      runs: RUNS,
      loadAverage: { before: loadBefore, after: loadAverage() },
      bareDenoMs: round1(median(bare)),
      launcherVersionMs: round1(median(launcherVersion)),
      versionMs: round1(median(version)),
      firstRequestMs: round1(median(first)),
      firstRequestWithConfigMs: round1(median(firstConfigured)),
      answerToExitMs: round1(median(exits)),
      perRoundMs: round1(median(long.gaps)),
      peakMemoryMb: round1(long.maxRssKb / 1024),
      targets: { versionMs: 40, firstRequestMs: 100, perRoundMs: 10, peakMemoryMb: 120 },
    };
    const rows = [
      ["bare Deno, empty script (the floor)", `${results.bareDenoMs} ms`, "—"],
      ["`tern --version` (bin/tern)", `${results.launcherVersionMs} ms`, "≤ 40 ms"],
      ["`deno run main.ts --version`", `${results.versionMs} ms`, "—"],
      ["first model request after start", `${results.firstRequestMs} ms`, "≤ 100 ms"],
      [
        "first model request, with a user config.jsonc",
        `${results.firstRequestWithConfigMs} ms`,
        "—",
      ],
      [
        "request of a one-word answer (no tool) to exit",
        `${results.answerToExitMs} ms`,
        "—",
      ],
      [
        `agent overhead per tool round (median of ${ROUNDS})`,
        `${results.perRoundMs} ms`,
        "≤ 10 ms",
      ],
      [`peak memory (${ROUNDS}-round turn)`, `${results.peakMemoryMb} MB`, "≤ 120 MB"],
    ];
    const md = [
      `# Benchmark results (${results.date.slice(0, 10)}, Deno ${results.deno}, median of ${RUNS})`,
      "",
      "Measured by `deno task bench` on the project machine (2 cores) against the scripted model",
      "server on 127.0.0.1, started through `bin/tern` (it works out the main process's permission",
      "flags) with the Deno cache an installed tern has. The machine is",
      "shared: the floor is measured between the first-request runs, and the 1-minute load average",
      `was ${results.loadAverage.before} before and ${results.loadAverage.after} after.`,
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
    await Deno.remove(configuredHome, { recursive: true });
  }
}

if (Deno.args[0] === "bash") {
  const { benchBash } = await import("./_bash_bench.ts");
  Deno.exitCode = await benchBash(Deno.args.slice(1));
} else {
  await benchRead();
}
