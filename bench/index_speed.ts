/**
 * Speed of the code index (issue 22, part 6): `deno run -A bench/index_speed.ts [runs]`.
 *
 * The repository is a real published source tree, date-fns (over 5,000 files of JavaScript and
 * TypeScript declarations), installed by bench/_npm_package.ts into a cache outside this
 * repository and copied into a workspace there. Measures, on this machine:
 * - a full index into a fresh index file, in a fresh process each run (grammar loading included),
 *   as files looked at per second, with the process's peak resident memory (VmHWM); by default
 *   (index worker threads) and, interleaved, in one thread (`threads: 0`);
 * - re-indexing after one file changed (and after none), in one process: by a full run
 *   (`indexWorkspace()`, which walks and stats every file) and by `refreshFiles()` naming it;
 * - query latency (p50, p99) of `IndexStore.search()` for identifier and natural-language
 *   queries made from the index's own symbols, after one warm-up query (reported apart).
 * Writes bench/results/index_speed.md and .json. `--child <workspace> <index>` is one full index
 * (used by the benchmark itself).
 */
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { indexWorkspace, refreshFiles } from "../src/harness/code_index.ts";
import { defaultThreads } from "../src/harness/code_index_pool.ts";
import { IndexStore } from "../src/index/store.ts";
import { splitWords } from "../src/index/words.ts";
import { BENCH_CACHE, installPackage } from "./_npm_package.ts";

const PACKAGE = { name: "date-fns", version: "4.1.0" };
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");
const RESULTS = join(ROOT, "bench", "results");
const TARGETS = { filesPerSecond: 1_000, reindexMs: 300, queryP50Ms: 20, queryP99Ms: 80 };
const QUERIES = 400;

interface FullRun {
  ms: number;
  /** Files looked at: indexed, or read and skipped (binary, generated, too large, refused). */
  files: number;
  indexed: number;
  /** Files skipped as generated (index/generated.ts): read and classified, not chunked. */
  generated: number;
  chunks: number;
  peakRssMiB: number;
  /** CPU time of the process (user + system), ms: what the index cost, whatever the load. */
  cpuMs: number;
}

/** One full index in this process (`threads`: as the option; default when absent); prints a FullRun as JSON. */
async function child(workspace: string, index: string, threads?: string): Promise<void> {
  const started = performance.now();
  const summary = await indexWorkspace(
    workspace,
    index,
    threads === undefined ? {} : { threads: Number(threads) },
  );
  const ms = performance.now() - started;
  const status = await Deno.readTextFile("/proc/self/status");
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  const files = summary.indexed + summary.unchanged + summary.binary + summary.generated +
    summary.tooLarge + summary.refused;
  // /proc/self/stat fields 14 and 15: user and system time in clock ticks (100 a second).
  const stat = (await Deno.readTextFile("/proc/self/stat")).split(") ")[1].split(" ");
  const cpuMs = (Number(stat[11]) + Number(stat[12])) * 10;
  const run: FullRun = {
    ms,
    files,
    indexed: summary.indexed,
    generated: summary.generated,
    chunks: summary.chunks,
    peakRssMiB: hwm / 1024,
    cpuMs,
  };
  console.log(JSON.stringify(run));
}

async function fullRun(workspace: string, index: string, threads?: number): Promise<FullRun> {
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(index + suffix).catch(() => {});
  const args = ["run", "-A", new URL(import.meta.url).pathname, "--child", workspace, index];
  if (threads !== undefined) args.push(String(threads));
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error("Cannot run the full index: the child process failed");
  return JSON.parse(new TextDecoder().decode(output.stdout)) as FullRun;
}

async function workspaceOf(): Promise<string> {
  const source = await installPackage(PACKAGE.name, PACKAGE.version);
  const workspace = join(BENCH_CACHE, `speed-${PACKAGE.name}-${PACKAGE.version}`);
  try {
    await Deno.stat(join(workspace, "package.json"));
  } catch {
    await Deno.mkdir(workspace, { recursive: true });
    const copy = await new Deno.Command("cp", { args: ["-a", `${source}/.`, workspace] }).output();
    if (!copy.success) throw new Error(`Cannot copy "${source}" to "${workspace}"`);
  }
  return workspace;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}

const round = (n: number) => Math.round(n * 10) / 10;

async function main(runs: number): Promise<void> {
  const workspace = await workspaceOf();
  const index = join(BENCH_CACHE, "speed-index", "index.sqlite");
  await Deno.mkdir(dirname(index), { recursive: true });
  // Interleaved: the default (index workers) and one thread, so the two see the same load.
  const full: FullRun[] = [];
  const oneThread: FullRun[] = [];
  for (let i = 0; i < runs; i++) {
    full.push(await fullRun(workspace, index));
    console.error(`full index ${i + 1}/${runs}: ${JSON.stringify(full[full.length - 1])}`);
    oneThread.push(await fullRun(workspace, index, 0));
    console.error(`one thread ${i + 1}/${runs}: ${JSON.stringify(oneThread.at(-1))}`);
  }

  // Re-index after one changed file: the changed file is restored after each run.
  const changed = join(workspace, "addDays.js");
  const original = await Deno.readTextFile(changed);
  await indexWorkspace(workspace, index); // warms the grammar, as a long-lived process has it
  const reindex: number[] = [];
  const unchanged: number[] = [];
  const refresh: number[] = [];
  try {
    for (let i = 0; i < 10; i++) {
      await Deno.writeTextFile(changed, `${original}\nexport function touched${i}() {}\n`);
      let started = performance.now();
      const summary = await indexWorkspace(workspace, index);
      reindex.push(performance.now() - started);
      if (summary.indexed !== 1) {
        throw new Error(`Expected 1 re-indexed file, got ${summary.indexed}`);
      }
      started = performance.now();
      await indexWorkspace(workspace, index);
      unchanged.push(performance.now() - started);
      await Deno.writeTextFile(changed, `${original}\nexport function refreshed${i}() {}\n`);
      started = performance.now();
      const refreshed = await refreshFiles(workspace, index, ["addDays.js"]);
      refresh.push(performance.now() - started);
      if (refreshed.indexed !== 1) {
        throw new Error(`Expected 1 refreshed file, got ${refreshed.indexed}`);
      }
    }
  } finally {
    await Deno.writeTextFile(changed, original);
    await indexWorkspace(workspace, index);
  }

  // Queries made from the index's symbols: the identifier itself, and its words as a phrase.
  const { store } = IndexStore.open(index);
  const symbols = symbolsOf(index);
  const queries: string[] = [];
  for (let i = 0; queries.length < QUERIES && i < symbols.length; i += 7) {
    const symbol = symbols[i];
    queries.push(queries.length % 2 ? symbol : `${splitWords(symbol).join(" ")} date`);
  }
  let started = performance.now();
  store.search(queries[0]);
  const warmUp = performance.now() - started;
  const times: number[] = [];
  for (const query of queries) {
    started = performance.now();
    store.search(query);
    times.push(performance.now() - started);
  }
  store.close();
  times.sort((a, b) => a - b);

  const files = full[0].files;
  const perSecond = full.map((run) => run.files / (run.ms / 1000)).sort((a, b) => a - b);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
  const report = {
    repository: `${PACKAGE.name}@${PACKAGE.version}`,
    files,
    indexed: full[0].indexed,
    generated: full[0].generated,
    chunks: full[0].chunks,
    runs,
    fullIndexMs: full.map((run) => round(run.ms)),
    filesPerSecondMedian: Math.round(median(perSecond)),
    filesPerSecondBest: Math.round(perSecond[perSecond.length - 1]),
    threads: defaultThreads(),
    cores: navigator.hardwareConcurrency,
    oneThreadFilesPerSecondMedian: Math.round(
      median(oneThread.map((run) => run.files / (run.ms / 1000))),
    ),
    oneThreadPeakRssMiB: round(Math.max(...oneThread.map((run) => run.peakRssMiB))),
    filesPerCpuSecondMedian: Math.round(
      median(full.map((run) => run.files / (run.cpuMs / 1000))),
    ),
    loadAverage: (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" "),
    peakRssMiB: round(Math.max(...full.map((run) => run.peakRssMiB))),
    reindexOneChangedMs: { median: round(median(reindex)), max: round(Math.max(...reindex)) },
    reindexNoChangeMs: { median: round(median(unchanged)), max: round(Math.max(...unchanged)) },
    refreshOneFileMs: { median: round(median(refresh)), max: round(Math.max(...refresh)) },
    queries: times.length,
    queryWarmUpMs: round(warmUp),
    queryP50Ms: round(percentile(times, 0.5)),
    queryP99Ms: round(percentile(times, 0.99)),
    targets: TARGETS,
  };
  await Deno.mkdir(RESULTS, { recursive: true });
  await Deno.writeTextFile(
    join(RESULTS, "index_speed.json"),
    JSON.stringify(report, null, 2) + "\n",
  );
  await Deno.writeTextFile(join(RESULTS, "index_speed.md"), markdown(report));
  console.log(markdown(report));
}

/** Every declared symbol in the index, in a stable order. */
function symbolsOf(index: string): string[] {
  const db = new DatabaseSync(index, { readOnly: true });
  try {
    const rows = db.prepare(
      "SELECT DISTINCT symbol FROM chunks WHERE kind NOT IN ('FILE', 'WINDOW') ORDER BY symbol",
    ).all() as { symbol: string }[];
    return rows.map((row) => row.symbol);
  } finally {
    db.close();
  }
}

function markdown(r: {
  repository: string;
  files: number;
  indexed: number;
  generated: number;
  chunks: number;
  runs: number;
  fullIndexMs: number[];
  filesPerSecondMedian: number;
  filesPerSecondBest: number;
  threads: number;
  cores: number;
  oneThreadFilesPerSecondMedian: number;
  oneThreadPeakRssMiB: number;
  filesPerCpuSecondMedian: number;
  loadAverage: string;
  peakRssMiB: number;
  reindexOneChangedMs: { median: number; max: number };
  reindexNoChangeMs: { median: number; max: number };
  refreshOneFileMs: { median: number; max: number };
  queries: number;
  queryWarmUpMs: number;
  queryP50Ms: number;
  queryP99Ms: number;
}): string {
  const mark = (ok: boolean) => ok ? "met" : "MISSED";
  return [
    "# Code index speed",
    "",
    "Written by `deno run -A bench/index_speed.ts` (do not edit); the machine is shared and",
    "loaded by other work, so the figures are upper bounds.",
    "",
    `Repository: ${r.repository} as published, ${r.files} files looked at: ${r.indexed} ` +
    `indexed into ${r.chunks} chunks, ${r.generated} skipped as generated (its bundles, ` +
    `minified builds and source maps; src/index/generated.ts). Load average at the end ` +
    `(2 cores): ${r.loadAverage}.`,
    "",
    "| measure | value | target | |",
    "|---|---|---|---|",
    `| full index, files/s (median of ${r.runs} fresh processes; ${r.threads} index workers ` +
    `on ${r.cores} cores) | ${r.filesPerSecondMedian} ` +
    `(best ${r.filesPerSecondBest}; ${
      r.fullIndexMs.join(", ")
    } ms) | ≥ ${TARGETS.filesPerSecond} | ` +
    `${mark(r.filesPerSecondMedian >= TARGETS.filesPerSecond)} |`,
    `| full index, files per CPU second of the process (median) | ${r.filesPerCpuSecondMedian} ` +
    `| | |`,
    `| full index in one thread (\`threads: 0\`, interleaved with the above), files/s | ` +
    `${r.oneThreadFilesPerSecondMedian} | | |`,
    `| indexer peak memory (VmHWM) | ${r.peakRssMiB} MiB (one thread: ` +
    `${r.oneThreadPeakRssMiB} MiB) | reported | |`,
    `| re-index after one changed file: \`indexWorkspace()\` (walks every file) | median ` +
    `${r.reindexOneChangedMs.median} ms, max ${r.reindexOneChangedMs.max} ms | ` +
    `< ${TARGETS.reindexMs} ms | ${mark(r.reindexOneChangedMs.median < TARGETS.reindexMs)} |`,
    `| re-index after one changed file: \`refreshFiles()\` (the file named) | median ` +
    `${r.refreshOneFileMs.median} ms, max ${r.refreshOneFileMs.max} ms | ` +
    `< ${TARGETS.reindexMs} ms | ${mark(r.refreshOneFileMs.median < TARGETS.reindexMs)} |`,
    `| re-index with nothing changed | median ${r.reindexNoChangeMs.median} ms, max ` +
    `${r.reindexNoChangeMs.max} ms | | |`,
    `| query p50 (${r.queries} queries) | ${r.queryP50Ms} ms | < ${TARGETS.queryP50Ms} ms | ` +
    `${mark(r.queryP50Ms < TARGETS.queryP50Ms)} |`,
    `| query p99 | ${r.queryP99Ms} ms | < ${TARGETS.queryP99Ms} ms | ` +
    `${mark(r.queryP99Ms < TARGETS.queryP99Ms)} |`,
    `| first query (loads the embeddings) | ${r.queryWarmUpMs} ms | | |`,
    "",
  ].join("\n");
}

if (import.meta.main) {
  if (Deno.args[0] === "--child") await child(Deno.args[1], Deno.args[2], Deno.args[3]);
  else await main(Number(Deno.args[0] ?? 3));
}
