/**
 * The targets of issue 21 as ratios to floors measured in the same run, and the table
 * bench/results/ratios.md shows them in. A ratio is the median of the per-pair ratios (tern's
 * run divided by the floor's run beside it), so a drift in the machine's speed during the
 * benchmark moves both sides of each pair alike.
 */
import type { AgentRun } from "./_agent_runs.ts";
import { LONG, SHORT } from "./_resume.ts";

/** One target's row. */
export interface RatioRow {
  measure: string;
  target: string;
  /** tern's value (median over the runs unless said), with its unit. */
  measured: string;
  /** The floor's value, with its unit, or "—". */
  floor: string;
  /** The median per-pair ratio, or undefined for an absolute target or none measured. */
  ratio?: number;
  /** Whether the target is met; undefined when not measured here. */
  met?: boolean;
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("Cannot take the median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The median of `a[i] / b[i]`: pairs measured one after the other. */
export function pairRatio(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError("Cannot pair runs of different counts");
  return median(a.map((x, i) => x / b[i]));
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** A ratio row: tern's and the floor's medians, and whether the pair ratio is within `limit`. */
function ratioRow(
  measure: string,
  limit: number,
  tern: number[],
  floor: number[],
  show = ms,
): RatioRow {
  const ratio = round2(pairRatio(tern, floor));
  return {
    measure,
    target: `≤ ${limit}×`,
    measured: show(median(tern)),
    floor: show(median(floor)),
    ratio,
    met: ratio <= limit,
  };
}

/** What the bash scenario and the prompt timing measured, pair by pair. */
export interface Measured {
  tern: AgentRun[];
  reference: AgentRun[];
  /**
   * tern's runs of the long session (`LONG_ROUNDS` bash rounds) with the whole process tree's
   * memory sampled (`AgentRun.tree`): the memory targets.
   */
  long: AgentRun[];
  /** tern's runs of a long session of here-docs that write a file (`RoundCommands`). */
  longWriting: AgentRun[];
  /** tern's runs of a long session of commands only tree-sitter reads (`RoundCommands`). */
  longParsed: AgentRun[];
  prompt: number[];
  emptyScript: number[];
  /** Resume times of the session with a long and with a short history before its compaction. */
  resumeLong: number[];
  resumeShort: number[];
  /** The same sessions resumed by a whole `tern run --resume`, to its first model request. */
  resumeRunLong: number[];
  resumeRunShort: number[];
}

/** The most a long history before the last compaction may slow a resume: noise, no more. */
export const FLAT = 1.25;

/** Bash rounds of the long session the memory targets are measured in. */
export const LONG_ROUNDS = 40;

/** The rows of the targets of issue 21, in the order the issue gives them. */
export function targetRows(m: Measured): RatioRow[] {
  const laterMedian = (r: AgentRun) => median(r.laterRounds);
  const rss = m.long.map((r) => r.maxRssMb);
  const largest = Math.max(...rss);
  const trees = m.long.map((r) => {
    if (r.tree === undefined) throw new RangeError("Cannot judge the tree: a run was not watched");
    return r.tree;
  });
  const tree = Math.max(...trees.map((t) => t.peakPssMb));
  const treeRss = Math.max(...trees.map((t) => t.peakRssMb));
  const processes = Math.max(...trees.map((t) => t.mostProcesses));
  const writingRss = m.longWriting.map((r) => r.maxRssMb);
  const largestWriting = Math.max(...writingRss);
  const parsedRss = m.longParsed.map((r) => r.maxRssMb);
  const largestParsed = Math.max(...parsedRss);
  return [
    ratioRow(
      "first model request (spawn to the server's receipt)",
      1.4,
      m.tern.map((r) => r.firstRequest),
      m.reference.map((r) => r.firstRequest),
    ),
    ratioRow(
      "sandboxed bash round, rounds 2–10 (median gap per run)",
      2.2,
      m.tern.map(laterMedian),
      m.reference.map(laterMedian),
    ),
    ratioRow(
      "round 1 (floor: the reference agent's first request)",
      1,
      m.tern.map((r) => r.round1),
      m.reference.map((r) => r.firstRequest),
    ),
    {
      measure: `largest process, ${LONG_ROUNDS}-round bash session (peak RSS; largest of the runs)`,
      target: "≤ 80 MB",
      measured: `${largest.toFixed(1)} MB (median ${median(rss).toFixed(1)})`,
      floor: `${median(m.reference.map((r) => r.maxRssMb)).toFixed(1)} MB`,
      met: largest <= 80,
    },
    {
      measure: `largest process, ${LONG_ROUNDS}-round session of commands that write ` +
        "(a here-doc into `out.txt`; peak RSS; largest of the runs)",
      target: "≤ 80 MB",
      measured: `${largestWriting.toFixed(1)} MB (median ${median(writingRss).toFixed(1)})`,
      floor: "—",
      met: largestWriting <= 80,
    },
    {
      measure: `largest process, ${LONG_ROUNDS}-round session of commands only tree-sitter reads ` +
        '(`for f in out.txt; do echo … > "$f"; done`; peak RSS; largest of the runs)',
      target: "≤ 80 MB",
      measured: `${largestParsed.toFixed(1)} MB (median ${median(parsedRss).toFixed(1)})`,
      floor: "—",
      met: largestParsed <= 80,
    },
    {
      // RSS summed, so a page shared by two of the tree's processes counts twice: an upper
      // bound. PSS would divide the Deno binary's pages with every other Deno process running
      // (the benchmark's own), and so count less than the tree holds.
      measure: `whole process tree, ${LONG_ROUNDS}-round bash session (peak sum of RSS, ` +
        "sampled every 10 ms; largest of the runs)",
      target: "≤ 120 MB",
      measured: `${treeRss.toFixed(1)} MB (sum of PSS ${tree.toFixed(1)} MB, ` +
        `at most ${processes} processes)`,
      floor: "—",
      met: treeRss <= 120,
    },
    ratioRow(
      "start to a usable interactive prompt (floor: `deno run` of an empty script)",
      2,
      m.prompt,
      m.emptyScript,
    ),
    {
      ...ratioRow(
        `session resume, ${LONG} entries before the last compaction (floor: ${SHORT})`,
        FLAT,
        m.resumeLong,
        m.resumeShort,
      ),
      target: `flat (≤ ${FLAT}×)`,
    },
    {
      ...ratioRow(
        `\`tern run --resume\` to its first model request, ${LONG} entries before the last ` +
          `compaction (floor: ${SHORT})`,
        FLAT,
        m.resumeRunLong,
        m.resumeRunShort,
      ),
      target: `flat (≤ ${FLAT}×)`,
    },
  ];
}

/** Rows for context, without a target: CPU and wall time of a whole run. */
export function contextRows(m: Measured): RatioRow[] {
  const seconds = (n: number) => `${n.toFixed(2)} s`;
  const row = (measure: string, tern: number[], floor: number[], show = ms): RatioRow => ({
    measure,
    target: "—",
    measured: show(median(tern)),
    floor: show(median(floor)),
    ratio: round2(pairRatio(tern, floor)),
  });
  return [
    row(
      "CPU per run (user + system)",
      m.tern.map((r) => r.cpuSeconds),
      m.reference.map((r) => r.cpuSeconds),
      seconds,
    ),
    row("whole run, spawn to exit", m.tern.map((r) => r.wall), m.reference.map((r) => r.wall)),
  ];
}

/** `rows` as a Markdown table. */
export function table(rows: RatioRow[]): string {
  const verdict = (met?: boolean) => met === undefined ? "—" : met ? "met" : "**not met**";
  return [
    "| measure | target | tern | floor | ratio | |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.measure} | ${r.target} | ${r.measured} | ${r.floor} | ${
        r.ratio === undefined ? "—" : `${r.ratio.toFixed(2)}×`
      } | ${verdict(r.met)} |`
    ),
  ].join("\n");
}
