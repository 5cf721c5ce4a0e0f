/** The results of bench/sandbox_bench.ts and their Markdown form (bench/results/sandbox.md). */
import type { Grants } from "../src/sandbox/types.ts";
import type { Stats } from "./_sandbox_measure.ts";

/** A measurement that could not run here, and why. */
export interface Skipped {
  skipped: string;
}

/** Everything bench/sandbox_bench.ts measured (written as bench/results/sandbox.json). */
export interface SandboxResults {
  date: string;
  machine: {
    cpus: number;
    cpuModel: string;
    os: string;
    /** 1, 5 and 15 minute load averages; the machine is shared. */
    loadAverageBefore: number[] | null;
    loadAverageAfter: number[] | null;
  };
  deno: string;
  v8: string;
  /** Size of the file each read returns. */
  fileBytes: number;
  /** The worker's grants (the `:workspace` profile for the temp workspace). */
  grants: Grants;
  /**
   * Whether the worker processes use Deno's transpile cache: the worker's own modules are
   * emitted in `denoDir` after the first start, and no later start rewrote them.
   */
  transpileCache: {
    denoDir: string | null;
    modules: string[];
    emitted: boolean;
    reusedByLaterStarts: boolean;
  };
  /** Per-call times of a `read`, in milliseconds. */
  read: {
    inProcess: Stats;
    warmProcessWorker: Stats;
    /** The same, with the worker in its bubblewrap view. */
    warmBwrapProcessWorker: Stats | Skipped;
    warmWorkerBackend: Stats | Skipped;
    coldProcessPerCall: Stats;
  };
  /** Start-up times, in milliseconds. */
  startup: {
    processWorker: Stats;
    /** The same in bubblewrap, taking turns with `processWorker`. */
    bwrapProcessWorker: Stats | Skipped;
    processWorkerEmptyDenoDir: Stats;
    workerBackend: Stats | Skipped;
    bareDeno: Stats;
    workerFlagsEmptyEntry: Stats;
  };
  /** Per-run times of `bash -c "echo hi"`, in milliseconds. */
  shell: {
    bwrap: Stats | Skipped;
    /** The same sandbox without the resource limits (a host folder at /tmp, no ulimit). */
    bwrapNoLimits: Stats | Skipped;
    /** With the limits and the run's pids and memory cgroups (made as root only). */
    bwrapPidsCgroup: Stats | Skipped;
    unsandboxed: Stats;
    bwrapVersion: string | null;
  };
  /** Untimed calls before the timed ones, for warm reads and the shell. */
  warmup: number;
  targets: { warmWorkerMedianMs: number };
  pass: { warmWorkerMedianMs: boolean };
}

function row(measure: string, result: Stats | Skipped, target = "—"): string {
  if ("skipped" in result) return `| ${measure} | skipped | | | | ${target} |`;
  const ms = (n: number) => `${n} ms`;
  const cells = [ms(result.median), ms(result.p90), ms(result.min), String(result.n)];
  return `| ${measure} | ${cells.join(" | ")} | ${target} |`;
}

/** The results as Markdown, in the style of bench/results/latest.md. */
export function renderMarkdown(results: SandboxResults): string {
  const { read, startup, shell, machine } = results;
  const target = `≤ ${results.targets.warmWorkerMedianMs} ms: ${
    results.pass.warmWorkerMedianMs ? "PASS" : "MISS"
  }`;
  const diff = (a: Stats | Skipped, b: Stats | Skipped) =>
    "skipped" in a || "skipped" in b ? "—" : `${Math.round((a.median - b.median) * 100) / 100} ms`;
  const load = (values: number[] | null) => values?.join(", ") ?? "unknown";
  const skips = [
    ["Worker backend", read.warmWorkerBackend],
    ["bubblewrap", shell.bwrap],
  ].flatMap(([name, value]) =>
    typeof value === "object" && "skipped" in value ? [`- ${name} skipped: ${value.skipped}`] : []
  );
  return [
    `# Sandbox benchmark results (${results.date.slice(0, 10)}, Deno ${results.deno})`,
    "",
    "Measured by `deno task bench` (bench/sandbox_bench.ts) on the project machine, which is",
    "shared with other work. Times in milliseconds; p90 is the nearest-rank 90th percentile.",
    "",
    `- machine: ${machine.cpus} cores (${machine.cpuModel}), ${machine.os}, V8 ${results.v8}`,
    `- load average (1, 5, 15 min): ${load(machine.loadAverageBefore)} before, ${
      load(machine.loadAverageAfter)
    } after`,
    `- each read returns a ${results.fileBytes}-byte file from a temp workspace; the worker has`,
    "  the `:workspace` profile's grants (read and write the workspace and a private tmp)",
    `- warm measures follow ${results.warmup} untimed calls; the two Deno floors, and the two`,
    "  shell runners, are timed in alternation",
    "",
    "| measure | median | p90 | min | runs | target |",
    "| --- | --- | --- | --- | --- | --- |",
    row("read, in-process (`tool.run`)", read.inProcess),
    row("read, warm process worker (`WorkerHost.call`)", read.warmProcessWorker, target),
    row("read, warm process worker in bubblewrap", read.warmBwrapProcessWorker, target),
    row("read, warm Worker backend", read.warmWorkerBackend),
    row("read, cold `deno run` per call (new host → result)", read.coldProcessPerCall),
    row("worker start-up, process (`WorkerHost.start()`)", startup.processWorker),
    row("worker start-up, process in bubblewrap (same rounds)", startup.bwrapProcessWorker),
    row("worker start-up, process, empty DENO_DIR", startup.processWorkerEmptyDenoDir),
    row("worker start-up, Worker backend", startup.workerBackend),
    row("bare Deno, empty script (the floor)", startup.bareDeno),
    row("Deno with the worker's flags and config, empty entry", startup.workerFlagsEmptyEntry),
    row(`\`bash -c "echo hi"\` in bubblewrap (${shell.bwrapVersion ?? "—"})`, shell.bwrap),
    row("… in bubblewrap without the resource limits (host /tmp, no ulimit)", shell.bwrapNoLimits),
    row("… in bubblewrap with the limits and the run's cgroups", shell.bwrapPidsCgroup),
    row('`bash -c "echo hi"` without a sandbox', shell.unsandboxed),
    "",
    "Differences of medians:",
    "",
    `- warm process worker over in-process, per read: ${
      diff(read.warmProcessWorker, read.inProcess)
    }`,
    `- worker start-up over Deno's floor with the same flags (loading the handler's module graph,`,
    `  the ready handshake): ${diff(startup.processWorker, startup.workerFlagsEmptyEntry)}`,
    `- empty DENO_DIR over a warm one (transpiling, no V8 code cache): ${
      diff(startup.processWorkerEmptyDenoDir, startup.processWorker)
    }`,
    `- bubblewrap over no sandbox, per command: ${diff(shell.bwrap, shell.unsandboxed)}`,
    `- the resource limits (ulimit builtins, sized tmpfs /tmp), per command: ${
      diff(shell.bwrap, shell.bwrapNoLimits)
    }`,
    `- the run's cgroups on top (a bind of each join file, one builtin write each), per command: ${
      diff(shell.bwrapPidsCgroup, shell.bwrap)
    }`,
    "",
    `Transpile cache (${results.transpileCache.denoDir ?? "no DENO_DIR"}): the worker's modules ${
      results.transpileCache.emitted ? "are emitted" : "are NOT emitted"
    } there`,
    `and ${
      results.transpileCache.reusedByLaterStarts ? "were reused" : "were NOT reused"
    } by later worker starts.`,
    ...(skips.length > 0 ? ["", ...skips] : []),
    "",
  ].join("\n");
}
