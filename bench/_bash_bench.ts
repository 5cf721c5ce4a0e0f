/**
 * The bash scenario of issue 21 (`bench/run.ts bash [runs] [--profile <file>]`): tern and the
 * reference agent (bench/reference_agent.ts) run the same 10 `bash` rounds against the scripted
 * model, interleaved (tern, reference, tern, reference...), after one warm-up pair; then the
 * interactive prompt and its floor, interleaved too. Everything runs inside a network namespace
 * with only loopback and a DNS recorder (tests/support/netns.ts), so every host looked up is recorded.
 * bin/build runs first when the bundle is older than the sources (bin/tern would otherwise time
 * tern from source). Writes bench/results/ratios.md and ratios.json. With `--profile <file>`, one more tern run
 * writes its phase marks (TERN_PHASE_MARKS) to the file, and a summary is printed.
 */
import { join } from "node:path";
import { ROOT } from "../tests/support/tern_process.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { type Agent, type AgentRun, ROUNDS, type RunPlace, runScenario } from "./_agent_runs.ts";
import {
  canIsolate,
  type DnsQuery,
  INSIDE_ENV,
  runIsolated,
  startDnsRecorder,
} from "../tests/support/netns.ts";
import { timeEmptyScript, timePrompt } from "./_prompt.ts";
import {
  AFTER,
  AFTER_RUN,
  LONG,
  SHORT,
  timeResumeProcess,
  timeResumeRun,
  writeCompactedSession,
} from "./_resume.ts";
import { contextRows, LONG_ROUNDS, type Measured, median, table, targetRows } from "./_ratios.ts";

/** Runs of the long session the memory targets are measured in. */
const LONG_RUNS = 3;

/** The benchmark's own permissions (also inside the namespace). */
const FLAGS = [
  "--no-prompt",
  "--allow-read",
  "--allow-write",
  "--allow-net=127.0.0.1",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
];

/** Runs the bash scenario; `args` are `[runs] [--profile <file>]`. Returns the exit code. */
export async function benchBash(args: string[]): Promise<number> {
  const at = args.indexOf("--profile");
  const profile = at >= 0 ? args[at + 1] : undefined;
  const rest = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
  const runs = Number(rest[0] ?? 5);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new RangeError(`Cannot run the bash benchmark: "${rest[0]}" is not a count of runs`);
  }
  if (Deno.env.get(INSIDE_ENV) === undefined) await ensureBundle();
  if (Deno.env.get(INSIDE_ENV) === undefined && canIsolate()) {
    const script = join(ROOT, "bench/run.ts");
    const withProfile = profile === undefined ? [] : ["--profile", profile];
    return await runIsolated(FLAGS, script, ["bash", String(runs), ...withProfile]);
  }
  await measure(runs, profile);
  return 0;
}

/**
 * Makes sure bin/tern starts the bundle of bin/build, as users run it: while a source file is
 * newer than the bundle, bin/tern starts main.ts from source instead, which starts slower and
 * takes more memory, and every figure would be off. Builds it when it is stale.
 */
async function ensureBundle(): Promise<void> {
  if (await ternBuildKind() === "bundle") return;
  console.error("bench: the bundle is older than the sources; running bin/build first");
  const built = await new Deno.Command(join(ROOT, "bin/build"), {
    args: ["--quiet"],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const kind = built.success ? await ternBuildKind() : "no build";
  if (kind !== "bundle") {
    throw new Error(`Cannot time tern: bin/tern starts ${kind}, not the bundle, after bin/build`);
  }
}

/** The build kind `bin/tern --version` names: "bundle" or "source". */
async function ternBuildKind(): Promise<string> {
  const out = await new Deno.Command(join(ROOT, "bin/tern"), {
    args: ["--version"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return /, (\w+)\)$/.exec(new TextDecoder().decode(out.stdout).trim())?.[1] ?? "unknown";
}

function checkBubblewrap(): void {
  const probe = new Deno.Command("bwrap", {
    args: ["--ro-bind", "/", "/", "--dev", "/dev", "true"],
    stdout: "null",
    stderr: "piped",
  });
  let out: Deno.CommandOutput;
  try {
    out = probe.outputSync();
  } catch (error) {
    throw new Error(`Cannot run the bash benchmark: bubblewrap (bwrap) is not usable: ${error}`);
  }
  if (!out.success) {
    const detail = new TextDecoder().decode(out.stderr).trim();
    throw new Error(`Cannot run the bash benchmark: bubblewrap (bwrap) fails here: ${detail}`);
  }
}

/** A stretch of time in which one kind of process ran, warm-ups included. */
interface Window {
  who: string;
  start: number;
  end: number;
}

/** The names looked up, by who was running then (anything else: the benchmark's own). */
function namesByWho(queries: DnsQuery[], windows: Window[]): Record<string, string[]> {
  const byWho: Record<string, string[]> = Object.fromEntries(windows.map((w) => [w.who, []]));
  byWho["the benchmark itself"] = [];
  for (const q of queries) {
    const who = windows.find((w) => q.at >= w.start && q.at <= w.end)?.who;
    byWho[who ?? "the benchmark itself"].push(q.name);
  }
  return byWho;
}

/** Runs `body` and notes its time window for `who`. */
async function within<T>(windows: Window[], who: string, body: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await body();
  } finally {
    windows.push({ who, start, end: performance.now() });
  }
}

async function measure(runs: number, profile: string | undefined): Promise<void> {
  checkBubblewrap();
  const isolated = Deno.env.get(INSIDE_ENV) !== undefined;
  const dns = isolated ? await startDnsRecorder() : undefined;
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-ws-" }));
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-bench-home-" }));
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    // No DENO_DIR: tern keeps its own cache in the checkout (bin/tern), as installed; the floors
    // use the fresh HOME's, which the warm-up run fills. A download shows among the hosts.
    DENO_NO_UPDATE_CHECK: "1",
  };
  const place: RunPlace = { workspace, home, env };
  const loadBefore = Deno.loadavg();
  const m: Measured = {
    tern: [],
    reference: [],
    prompt: [],
    emptyScript: [],
    long: [],
    longWriting: [],
    longParsed: [],
    resumeLong: [],
    resumeShort: [],
    resumeRunLong: [],
    resumeRunShort: [],
  };
  const sessions = await Deno.makeTempDir({ prefix: "tern-bench-sessions-" });
  const longId = writeCompactedSession(sessions, LONG);
  const shortId = writeCompactedSession(sessions, SHORT);
  // Sessions of the workspace, in a home of their own, for whole runs that resume them.
  const resumeHome = await Deno.makeTempDir({ prefix: "tern-bench-resume-home-" });
  const resumePlace = { home: resumeHome, workspace, env };
  const runLongId = writeCompactedSession(resumeHome, LONG, { cwd: workspace, after: AFTER_RUN });
  const runShortId = writeCompactedSession(resumeHome, SHORT, { cwd: workspace, after: AFTER_RUN });
  const windows: Window[] = [];
  const label = { tern: "tern run (bash scenario)", reference: "the reference agent" };
  // A model server for the interactive runs: none may be asked anything before the prompt.
  const idle = await startScriptedServer([{ text: "unused" }]);
  try {
    const agents: Agent[] = ["tern", "reference"];
    for (let i = 0; i <= runs; i++) {
      // The warm-up's lookups are told apart: a first run may fill a cache the others use.
      const as = (who: string) => i === 0 ? `${who} (warm-up)` : who;
      for (const agent of agents) {
        const run = await within(windows, as(label[agent]), () => runScenario(agent, place));
        if (i > 0) m[agent].push(run);
      }
      const floor = await within(
        windows,
        as("the empty script"),
        () => timeEmptyScript(place),
      );
      const prompt = await within(
        windows,
        as("tern interactive (to the prompt and Ctrl-D)"),
        () => timePrompt(place, idle.baseUrl),
      );
      // Three pairs a run: a resume takes about 15 ms, where one slow process moves a median
      // of five by a third.
      const resumes: [number, number][] = [];
      for (let pair = 0; pair < 3; pair++) {
        resumes.push([
          await timeResumeProcess(sessions, longId),
          await timeResumeProcess(sessions, shortId),
        ]);
      }
      const resumeRun = await within(
        windows,
        as("tern run --resume (long, then short history)"),
        async () => [
          await timeResumeRun(resumePlace, runLongId),
          await timeResumeRun(resumePlace, runShortId),
        ],
      );
      if (i > 0) {
        m.resumeRunLong.push(resumeRun[0]);
        m.resumeRunShort.push(resumeRun[1]);
        m.emptyScript.push(floor);
        m.prompt.push(prompt);
        for (const [long, short] of resumes) {
          m.resumeLong.push(long);
          m.resumeShort.push(short);
        }
      }
    }
    if (idle.requests.length > 0) {
      throw new Error(`The interactive runs asked the model ${idle.requests.length} times`);
    }
    // The memory targets: a longer session, its whole process tree sampled as it runs.
    for (let i = 0; i < LONG_RUNS; i++) {
      m.long.push(
        await within(
          windows,
          `tern run (${LONG_ROUNDS}-round bash session, memory)`,
          () => runScenario("tern", { ...place, rounds: LONG_ROUNDS, watchTree: true }),
        ),
      );
    }
    // The same target with commands that write: here-docs, and loops only tree-sitter reads.
    for (let i = 0; i < LONG_RUNS; i++) {
      m.longWriting.push(
        await within(
          windows,
          `tern run (${LONG_ROUNDS}-round session of here-docs, memory)`,
          () => runScenario("tern", { ...place, rounds: LONG_ROUNDS, commands: "heredoc" }),
        ),
      );
      m.longParsed.push(
        await within(
          windows,
          `tern run (${LONG_ROUNDS}-round session of commands tree-sitter reads, memory)`,
          () => runScenario("tern", { ...place, rounds: LONG_ROUNDS, commands: "parsed" }),
        ),
      );
    }
    let marks: string | undefined;
    if (profile !== undefined) {
      // Written first where tern may write (its home), then copied: tern's process may write
      // only its home, the temp folder and the workspace's memory.
      const written = join(home, "phase-marks.jsonl");
      const run = await within(
        windows,
        `${label.tern} with TERN_PHASE_MARKS`,
        () => runScenario("tern", { ...place, profile: written }),
      );
      await Deno.copyFile(written, profile);
      marks = await summarizeMarks(profile, run);
    }
    const loadAfter = Deno.loadavg();
    const hosts = dns === undefined ? undefined : namesByWho(dns.queries, windows);
    await writeResults({ runs, m, loadBefore, loadAfter, hosts });
    if (marks !== undefined) console.log(marks);
  } finally {
    await idle.close();
    dns?.close();
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(home, { recursive: true });
    await Deno.remove(sessions, { recursive: true });
  }
}

/** The phase marks of one run, as milliseconds after the spawn, one line each. */
async function summarizeMarks(file: string, run: AgentRun): Promise<string> {
  const spawnEpoch = performance.timeOrigin + run.spawnedAt;
  const lines = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
  return [
    `Phase marks of one tern run (${file}), milliseconds after the spawn:`,
    ...lines.map((mark) => {
      const detail = mark.detail ? ` ${JSON.stringify(mark.detail)}` : "";
      return `${(mark.epochMs - spawnEpoch).toFixed(1).padStart(9)}  ${mark.name}${detail}`;
    }),
  ].join("\n");
}

interface Results {
  runs: number;
  m: Measured;
  loadBefore: number[];
  loadAfter: number[];
  /** DNS names looked up, by who was running (warm-ups included). */
  hosts?: Record<string, string[]>;
}

async function writeResults(r: Results): Promise<void> {
  const rows = targetRows(r.m);
  const context = contextRows(r.m);
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(" / ");
  const names = (list: string[]) => {
    if (list.length === 0) return "none";
    const counts = new Map<string, number>();
    for (const name of list) counts.set(name, (counts.get(name) ?? 0) + 1);
    return [...counts].map(([name, n]) => `\`${name}\`${n > 1 ? ` (${n} queries)` : ""}`)
      .join(", ");
  };
  const hosts = r.hosts === undefined
    ? "Hosts contacted: **not recorded** (this machine cannot make a network namespace)."
    : [
      "Hosts contacted: the model server on 127.0.0.1 (it received every request of the bash",
      "runs, and none from the interactive runs). DNS names looked up (every run, warm-ups",
      "included; recorded in a network namespace with only loopback, tests/support/netns.ts):",
      "",
      ...Object.entries(r.hosts).map(([who, list]) => `- ${who}: ${names(list)}`),
    ].join("\n");
  const date = new Date().toISOString();
  // Which processes made the largest tree peak: a regression shows where it is, not only that.
  const largestTree = r.m.long.map((run) => run.tree).filter((t) => t !== undefined)
    .sort((a, b) => b.peakRssMb - a.peakRssMb)[0];
  const atPeak = (largestTree?.atPeak ?? []).map((p) => `- ${p.rssMb} MB: \`${p.command}\``);
  const md = [
    `# Issue 21 targets as ratios (${date.slice(0, 16)}Z, Deno ${Deno.version.deno})`,
    "",
    "Generated by (from the repository root):",
    "",
    "```",
    `deno run ${FLAGS.join(" ")} bench/run.ts bash ${r.runs}`,
    "```",
    "",
    `${r.runs} runs after one warm-up, interleaved: tern (\`bin/tern run --mode bypass\`, the`,
    "shell in bubblewrap) and the reference agent (bench/reference_agent.ts: ~100 lines of",
    `Deno, one bash tool, no sandbox) each run ${ROUNDS} rounds of one \`bash\` call to \`echo\`,`,
    "then an answer, against the scripted model server on 127.0.0.1 (chunks without delay);",
    "then the interactive prompt (`bin/tern` in a 100×30 pty until its placeholder) beside",
    "`deno run` of an empty script through the same pty (until it exits). A ratio is the median",
    "of the per-pair ratios. Peak RSS and CPU are GNU time's (`/usr/bin/time`): the largest",
    "single process it waited for, and user + system of all of them. The memory targets come",
    `from ${LONG_RUNS} more tern runs of ${LONG_ROUNDS} rounds each (and ${LONG_RUNS} whose commands write a`,
    `file with a here-doc, and ${LONG_RUNS} whose commands only tree-sitter reads): GNU time's`,
    "largest process, and",
    "the whole tree below it sampled from /proc every 10 ms (bench/_tree_memory.ts: the sum of",
    "the processes' RSS, a page two of them share counted twice; a child between clone and",
    "exec, which runs in its parent's memory, is left out). Session resume: the session's",
    "opening as `tern run --resume` does it (find, open, replay) in a fresh `deno` process, for two",
    `sessions that end alike (a compaction, then ${AFTER} entries) but hold ${LONG} or ${SHORT}`,
    "entries before the compaction, timed in turn, three pairs per run; and a whole",
    "`bin/tern run --resume` from its spawn to its first model request, for two such sessions",
    `of the workspace (${AFTER_RUN} entries after the compaction), one pair per run.`,
    "",
    `Load average (1 / 5 / 15 min) before: ${load(r.loadBefore)}; after: ${load(r.loadAfter)}`,
    `on ${navigator.hardwareConcurrency} cores.`,
    "",
    table(rows),
    "",
    "Context (no target):",
    "",
    table(context),
    "",
    ...(atPeak.length === 0 ? [] : [
      "The processes at the largest whole-tree peak (RSS each, command line cut at 120",
      "characters):",
      "",
      ...atPeak,
      "",
    ]),
    `Samples that saw a child between clone and exec (left out of the sums): ${
      r.m.long.map((run) => run.tree?.unstarted ?? 0).join(", ")
    } (per 40-round run).`,
    "",
    hosts,
    "",
  ].join("\n");
  const json = {
    date,
    deno: Deno.version.deno,
    runs: r.runs,
    loadAverage: { before: r.loadBefore, after: r.loadAfter },
    targets: rows,
    context,
    hosts: r.hosts ?? null,
    raw: {
      ...r.m,
      medians: {
        ternLaterRound: median(r.m.tern.map((t) => median(t.laterRounds))),
        referenceLaterRound: median(r.m.reference.map((t) => median(t.laterRounds))),
      },
    },
  };
  await Deno.mkdir(join(ROOT, "bench/results"), { recursive: true });
  await Deno.writeTextFile(join(ROOT, "bench/results/ratios.md"), md);
  await Deno.writeTextFile(
    join(ROOT, "bench/results/ratios.json"),
    JSON.stringify(json, null, 2) + "\n",
  );
  console.log(md);
}
