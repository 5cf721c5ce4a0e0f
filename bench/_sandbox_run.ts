/**
 * The sandbox benchmark behind bench/sandbox_bench.ts (see there for what it measures): sets up
 * a temp workspace, takes every measurement, and writes bench/results/sandbox.{json,md}.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bwrapArgs, probeBwrap, sandboxEnv, shellPrefix } from "../src/sandbox/bwrap.ts";
import { makeRunCgroup } from "../src/sandbox/run_cgroup.ts";
import { runInProcessGroup } from "../src/sandbox/process.ts";
import { compileProfile } from "../src/sandbox/profiles.ts";
import {
  gitDirsUnder,
  hostSocketLocations,
  secretLocations,
} from "../src/sandbox/protected_paths.ts";
import {
  createBwrapRunner,
  createUnsandboxedRunner,
  shellEnv,
} from "../src/sandbox/shell_runner.ts";
import type { Grants, ShellPlan, ShellRunner } from "../src/sandbox/types.ts";
import { defaultConfigPath } from "../src/sandbox/worker/flags.ts";
import type { WorkerWrap } from "../src/sandbox/worker/host.ts";
import { denoDirOf, sourceRootOf, workerBwrapArgv } from "../src/sandbox/worker/view.ts";
import {
  denoRun,
  emptyEntryArgs,
  shellEcho,
  type Stats,
  stats,
  timeColdReads,
  timeInProcessReads,
  timeInterleaved,
  timeStarts,
  timeStartsInterleaved,
  timeWarmReads,
} from "./_sandbox_measure.ts";
import { renderMarkdown, type SandboxResults } from "./_sandbox_report.ts";

const WARM_CALLS = 200;
const WARMUP = 20;
const COLD_CALLS = 15;
const STARTS = 5;
const FLOOR_RUNS = 10;
const SHELL_RUNS = 50;
const SHELL_WARMUP = 5;
const TARGET_WARM_MS = 3;
/** The argument that makes bench/sandbox_bench.ts the Worker-backend child. */
const WORKER_CHILD = "--worker-backend-child";
const ENTRY = new URL("./sandbox_bench.ts", import.meta.url);

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** A temp workspace with the bench file, a private tmp, and the `:workspace` grants for them. */
interface Box {
  root: string;
  workspace: string;
  tmp: string;
  grants: Grants;
}

async function makeBox(): Promise<Box> {
  // Not below /tmp, where bubblewrap's private /tmp would cover the workspace's mount point.
  const dir = await Deno.stat("/var/tmp").then((info) => info.isDirectory, () => false)
    ? "/var/tmp"
    : undefined;
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix: "tern-bench-sandbox-" }));
  const workspace = join(root, "ws");
  const tmp = join(root, "tmp");
  await Deno.mkdir(workspace);
  await Deno.mkdir(tmp);
  const line = "the quick brown fox jumps over the lazy dog, again and again and again\n";
  await Deno.writeTextFile(join(workspace, "notes.txt"), line.repeat(15).slice(0, 1023) + "\n");
  const { grants } = compileProfile(":workspace", { workspace, tmp });
  return { root, workspace, tmp, grants };
}

/** In the child: Worker-backend start-ups and warm reads, printed as JSON on stdout. */
async function runWorkerChild(): Promise<void> {
  const box = await makeBox();
  try {
    const setup = { workspace: box.workspace, grants: box.grants, backend: "worker" as const };
    const starts = await timeStarts(setup, STARTS);
    const warm = await timeWarmReads(setup, WARM_CALLS, WARMUP);
    console.log(JSON.stringify({ starts, warm }));
  } finally {
    await Deno.remove(box.root, { recursive: true });
  }
}

/** Runs bench/sandbox_bench.ts as the Worker-backend child; a failure is a reason to skip. */
async function measureWorkerBackend(): Promise<
  { starts: Stats; warm: Stats } | { skipped: string }
> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-worker-options",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--config",
      join(ROOT, "deno.json"),
      fileURLToPath(ENTRY),
      WORKER_CHILD,
    ],
    cwd: ROOT,
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    const detail = new TextDecoder().decode(out.stderr).trim().slice(-500);
    return { skipped: `the child with --unstable-worker-options failed: ${detail}` };
  }
  const { starts, warm } = JSON.parse(text.split("\n").at(-1) ?? "{}");
  return { starts: stats(starts), warm: stats(warm) };
}

/** The shell plan of the `:workspace` profile for `box`, as the sandbox runtime builds it. */
async function workspacePlan(box: Box, env: Record<string, string>): Promise<ShellPlan> {
  const home = env.HOME;
  return {
    cwd: box.workspace,
    writable: [box.workspace],
    readOnly: await gitDirsUnder([box.workspace]),
    hidden: [...(home ? secretLocations(home) : []), ...hostSocketLocations(env)],
    network: false,
    env: shellEnv(env),
  };
}

/** The worker's bubblewrap wrapping as runtime.ts builds it, for the box's plan. */
async function bwrapWrap(box: Box, env: Record<string, string>): Promise<WorkerWrap> {
  const plan = await workspacePlan(box, env);
  const denoDir = denoDirOf(env) ?? "/nonexistent";
  const sourceRoot = sourceRootOf(defaultConfigPath());
  return (argv, { grants }) => [
    "bwrap",
    ...workerBwrapArgv(plan, { grants, denoPath: argv[0], denoDir, sourceRoot }, argv),
  ];
}

/**
 * The bubblewrap runner as it was before the limits: `tmp` (a host folder) bound at `/tmp`
 * instead of a sized tmpfs, and no ulimit builtins before the command.
 */
function runnerWithoutLimits(plan: ShellPlan, tmp: string): ShellRunner {
  const prefix = shellPrefix(plan);
  return (command, run) => {
    const args = bwrapArgs(plan, command);
    const at = args.indexOf("--size");
    args.splice(at, 4, "--bind", tmp, "/tmp");
    args[args.length - 1] = args[args.length - 1].replace(prefix, "");
    return runInProcessGroup("bwrap", {
      args,
      cwd: "/",
      env: sandboxEnv(plan),
      timeoutMs: run.timeoutMs,
    });
  };
}

function loadAverage(): number[] | null {
  try {
    return Deno.loadavg().map((n) => Math.round(n * 100) / 100);
  } catch {
    return null;
  }
}

/** The worker's own modules whose transpiled form the cache check looks at. */
const CACHED_MODULES = [
  new URL("../src/sandbox/worker/child.ts", import.meta.url),
  new URL("../src/tools/worker_handler.ts", import.meta.url),
];

/** The DENO_DIR a worker process uses: it passes DENO_DIR, XDG_CACHE_HOME and HOME on. */
function denoDir(env: Record<string, string>): string | null {
  if (env.DENO_DIR) return env.DENO_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "deno");
  return env.HOME ? join(env.HOME, ".cache", "deno") : null;
}

/** Modification times of the transpiled {@linkcode CACHED_MODULES} in `dir` (null: absent). */
async function emitTimes(dir: string | null): Promise<(number | null)[]> {
  return await Promise.all(CACHED_MODULES.map(async (url) => {
    if (dir === null) return null;
    const emitted = join(dir, "gen", "file", `${fileURLToPath(url)}.js`);
    return await Deno.stat(emitted).then((info) => info.mtime?.getTime() ?? null, () => null);
  }));
}

/** The CPU model from `lscpu` (Deno reads /proc only with --allow-all); "unknown" without it. */
async function cpuModel(): Promise<string> {
  try {
    const out = await new Deno.Command("lscpu", { stdout: "piped", stderr: "null" }).output();
    const text = new TextDecoder().decode(out.stdout);
    return /^Model name:\s*(.+)$/m.exec(text)?.[1].trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

async function main(): Promise<void> {
  const box = await makeBox();
  try {
    const env = Deno.env.toObject();
    const loadBefore = loadAverage();
    const setup = { workspace: box.workspace, grants: box.grants, backend: "process" as const };
    console.log("read in-process …");
    const inProcess = stats(await timeInProcessReads(box.workspace, WARM_CALLS, WARMUP));
    console.log("read through a warm process worker …");
    const warm = stats(await timeWarmReads(setup, WARM_CALLS, WARMUP));
    const cacheDir = denoDir(env);
    const emittedAfterFirstStart = await emitTimes(cacheDir);
    const probe = await probeBwrap();
    const boxed = probe.ok ? [{ ...setup, wrap: await bwrapWrap(box, env) }] : [];
    console.log("read through a warm process worker in bubblewrap …");
    const warmBwrap = probe.ok
      ? stats(await timeWarmReads(boxed[0], WARM_CALLS, WARMUP))
      : { skipped: probe.reason };
    console.log("worker start-up (plain and in bubblewrap, taking turns) …");
    const [startTimes, bwrapStartTimes] = await timeStartsInterleaved([setup, ...boxed], STARTS);
    const start = stats(startTimes);
    const bwrapStart = probe.ok ? stats(bwrapStartTimes) : { skipped: probe.reason };
    const freshCache = [];
    for (let i = 0; i < 3; i++) {
      const denoDir = await Deno.makeTempDir({ dir: box.root, prefix: "deno-dir-" });
      freshCache.push(...await timeStarts({ ...setup, env: { ...env, DENO_DIR: denoDir } }, 1));
    }
    console.log("read through a cold worker per call …");
    const cold = stats(await timeColdReads(setup, COLD_CALLS));
    const emittedAfterStarts = await emitTimes(cacheDir);
    console.log("Deno start-up floor …");
    await Deno.writeTextFile(join(box.root, "empty.js"), "");
    const bare = ["run", "--no-config", join(box.root, "empty.js")];
    const [bareDeno, emptyEntry] = (await timeInterleaved(FLOOR_RUNS, 1, [
      denoRun(bare, box.workspace),
      denoRun(emptyEntryArgs(box.grants), box.workspace),
    ])).map(stats);
    console.log("Worker backend (child with --unstable-worker-options) …");
    const workerBackend = await measureWorkerBackend();
    console.log("bash echo hi …");
    const plain = shellEcho(createUnsandboxedRunner(shellEnv(env)), box.workspace);
    const plan = await workspacePlan(box, env);
    // The limits' cost: the same sandbox without them (a host folder at /tmp, no ulimit), and
    // with the run's cgroups (pids and memory) the runtime adds where it can make them (as root).
    const caps = { processes: 1024, memoryBytes: 16384 * 1024 * 1024 };
    const pids = probe.ok ? await makeRunCgroup(`tern-tmp-bench-${Deno.pid}`, caps) : null;
    const confined = probe.ok
      ? [
        shellEcho(createBwrapRunner(plan), box.workspace),
        shellEcho(runnerWithoutLimits(plan, box.tmp), box.workspace),
        ...(pids
          ? [shellEcho(createBwrapRunner({ ...plan, cgroupFiles: pids.joinFiles }), box.workspace)]
          : []),
      ]
      : [];
    const [unsandboxed, bwrapTimes, noLimitTimes, pidsTimes] = await timeInterleaved(
      SHELL_RUNS,
      SHELL_WARMUP,
      [plain, ...confined],
    );
    await pids?.remove();
    const bwrap = probe.ok ? stats(bwrapTimes) : { skipped: probe.reason };
    const bwrapNoLimits = probe.ok ? stats(noLimitTimes) : { skipped: probe.reason };
    const bwrapPidsCgroup = pidsTimes
      ? stats(pidsTimes)
      : { skipped: "no cgroup can be made here" };

    const results: SandboxResults = {
      date: new Date().toISOString(),
      machine: {
        cpus: navigator.hardwareConcurrency,
        cpuModel: await cpuModel(),
        os: `${Deno.build.os} ${Deno.build.arch}`,
        loadAverageBefore: loadBefore,
        loadAverageAfter: loadAverage(),
      },
      deno: Deno.version.deno,
      v8: Deno.version.v8,
      fileBytes: (await Deno.stat(join(box.workspace, "notes.txt"))).size,
      grants: box.grants,
      transpileCache: {
        denoDir: cacheDir,
        modules: CACHED_MODULES.map((url) => fileURLToPath(url).slice(ROOT.length)),
        emitted: emittedAfterFirstStart.every((time) => time !== null),
        reusedByLaterStarts: emittedAfterFirstStart.every((time, i) =>
          time !== null && time === emittedAfterStarts[i]
        ),
      },
      read: {
        inProcess,
        warmProcessWorker: warm,
        warmBwrapProcessWorker: warmBwrap,
        warmWorkerBackend: "skipped" in workerBackend ? workerBackend : workerBackend.warm,
        coldProcessPerCall: cold,
      },
      startup: {
        processWorker: start,
        bwrapProcessWorker: bwrapStart,
        processWorkerEmptyDenoDir: stats(freshCache),
        workerBackend: "skipped" in workerBackend ? workerBackend : workerBackend.starts,
        bareDeno,
        workerFlagsEmptyEntry: emptyEntry,
      },
      shell: {
        bwrap,
        bwrapNoLimits,
        bwrapPidsCgroup,
        unsandboxed: stats(unsandboxed),
        bwrapVersion: probe.ok ? probe.version : null,
      },
      warmup: WARMUP,
      targets: { warmWorkerMedianMs: TARGET_WARM_MS },
      pass: { warmWorkerMedianMs: warm.median <= TARGET_WARM_MS },
    };
    const md = renderMarkdown(results);
    await Deno.mkdir(join(ROOT, "bench/results"), { recursive: true });
    await Deno.writeTextFile(
      join(ROOT, "bench/results/sandbox.json"),
      JSON.stringify(results, null, 2) + "\n",
    );
    await Deno.writeTextFile(join(ROOT, "bench/results/sandbox.md"), md);
    console.log(md);
    const verdict = results.pass.warmWorkerMedianMs ? "PASS" : "MISS";
    console.log(
      `${verdict}: warm-worker read median ${warm.median} ms (target ≤ ${TARGET_WARM_MS} ms)`,
    );
  } finally {
    await Deno.remove(box.root, { recursive: true });
  }
}

/**
 * Runs the benchmark and writes its results; with `--worker-backend-child` among `args`, only
 * the Worker-backend part, printed as JSON (the child that needs `--unstable-worker-options`).
 */
export async function runSandboxBench(args: readonly string[]): Promise<void> {
  if (args.includes(WORKER_CHILD)) await runWorkerChild();
  else await main();
}
