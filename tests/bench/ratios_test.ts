/** The ratio table of the bash benchmark (bench/_ratios.ts). */
import { deepEqual, equal } from "node:assert/strict";
import type { AgentRun } from "../../bench/_agent_runs.ts";
import { pairRatio, targetRows } from "../../bench/_ratios.ts";

function run(firstRequest: number, round1: number, later: number, rss: number): AgentRun {
  return {
    firstRequest,
    round1,
    laterRounds: [later, later + 1, later - 1],
    wall: 100,
    cpuSeconds: 0.1,
    maxRssMb: rss,
    spawnedAt: 0,
    exitedAt: 100,
  };
}

Deno.test("pairRatio() is the median of the per-pair ratios, not a ratio of medians", () => {
  // Medians 20 / 10 = 2, but the pairs say 1, 1 and 10.
  equal(pairRatio([10, 20, 100], [10, 20, 10]), 1);
});

Deno.test("targetRows() judges each target against its floor of the same run", () => {
  const rows = targetRows({
    tern: [run(40, 30, 6, 70), run(44, 31, 6, 90)],
    reference: [run(32, 9, 3, 49), run(30, 9, 3, 49)],
    prompt: [100, 110],
    emptyScript: [60, 50],
    resumeLong: [30, 40],
    resumeShort: [20, 20],
  });
  deepEqual(rows.map((r) => r.met), [true, true, true, false, true, false]);
  equal(rows[0].ratio, 1.36);
  equal(rows[1].ratio, 2, "the median gap of rounds 2–10 against the reference's");
  equal(rows[2].ratio, 0.99, "round 1 against the reference's first request");
  equal(rows[3].measured, "90.0 MB (median 80.0)", "the largest run counts");
  equal(rows[5].ratio, 1.75, "resume with a long history before the compaction, against a short");
});
