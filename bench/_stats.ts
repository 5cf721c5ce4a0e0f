/** Timing statistics shared by the benchmarks. */

/** Milliseconds, rounded to 0.01. */
export interface Stats {
  n: number;
  median: number;
  p90: number;
  min: number;
}

/** Median, 90th percentile (nearest rank) and minimum of `times` (milliseconds). */
export function stats(times: readonly number[]): Stats {
  if (times.length === 0) throw new RangeError("Cannot summarize timings: none were taken");
  const sorted = [...times].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const p90 = sorted[Math.ceil(sorted.length * 0.9) - 1];
  const round = (n: number) => Math.round(n * 100) / 100;
  return { n: sorted.length, median: round(median), p90: round(p90), min: round(sorted[0]) };
}
