/** The ratio table of the bash benchmark (bench/_ratios.ts). */
import { deepEqual, equal, ok } from "node:assert/strict";
import type { AgentRun } from "../../bench/_agent_runs.ts";
import { pairRatio, targetRows } from "../../bench/_ratios.ts";
import { startTreeWatch } from "../../bench/_tree_memory.ts";

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
  const tree = (peakRssMb: number) => ({ peakPssMb: 60, peakRssMb, mostProcesses: 5, samples: 9 });
  const rows = targetRows({
    tern: [run(40, 30, 6, 70), run(44, 31, 6, 70)],
    reference: [run(32, 9, 3, 49), run(30, 9, 3, 49)],
    long: [
      { ...run(40, 30, 6, 70), tree: tree(100) },
      { ...run(40, 30, 6, 90), tree: tree(130) },
    ],
    longWriting: [run(40, 30, 8, 79), run(40, 30, 8, 76)],
    longParsed: [run(40, 30, 8, 88), run(40, 30, 8, 86)],
    prompt: [100, 110],
    emptyScript: [60, 50],
    resumeLong: [30, 40],
    resumeShort: [20, 20],
    resumeRunLong: [80, 88],
    resumeRunShort: [80, 80],
  });
  deepEqual(
    rows.map((r) => r.met),
    [true, true, true, false, true, false, false, true, false, true],
  );
  equal(rows[0].ratio, 1.36);
  equal(rows[1].ratio, 2, "the median gap of rounds 2–10 against the reference's");
  equal(rows[2].ratio, 0.99, "round 1 against the reference's first request");
  equal(rows[3].measured, "90.0 MB (median 80.0)", "the largest run of the long session counts");
  equal(rows[4].measured, "79.0 MB (median 77.5)", "the largest run of the writing session");
  equal(rows[5].measured, "88.0 MB (median 87.0)", "the largest run of the parsed session");
  equal(rows[6].measured, "130.0 MB (sum of PSS 60.0 MB, at most 5 processes)");
  equal(rows[8].ratio, 1.75, "resume with a long history before the compaction, against a short");
  equal(rows[9].ratio, 1.05, "a whole run's resume, long history against short, pair by pair");
});

Deno.test("startTreeWatch() sums the memory of every process below the root, not the root's own", async () => {
  const sampler = await startTreeWatch(5);
  // sh (the root) starts a sleep that starts nothing: the tree below the root is one process.
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", "sleep 0.4 & wait"],
    stdout: "null",
  }).spawn();
  await sampler.watch(child.pid);
  await child.status;
  const peaks = await sampler.stop();
  equal(peaks.mostProcesses, 1);
  ok(peaks.samples > 5, `${peaks.samples} samples`);
  ok(peaks.peakPssMb > 0 && peaks.peakPssMb <= peaks.peakRssMb, JSON.stringify(peaks));
});

Deno.test("startTreeWatch() leaves out a child that runs its parent's program without an exec", async () => {
  const sampler = await startTreeWatch(5);
  // The inner sh's subshell is a fork of it, with its executable and command line; it starts a
  // sleep (and then runs `:` itself, so it is not replaced by the sleep).
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", 'sh -c "(sleep 0.5; :) & wait"'],
    stdout: "null",
  }).spawn();
  await sampler.watch(child.pid);
  await child.status;
  const peaks = await sampler.stop();
  equal(peaks.mostProcesses, 2, JSON.stringify(peaks));
  ok((peaks.unstarted ?? 0) > 0, JSON.stringify(peaks));
});
