/**
 * The scenario benchmark's runner (bench/scenarios.ts) as a process: it runs scenario files,
 * writes the report, and fails when a scenario fails.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../support/tern_process.ts";
import { loadScenarios } from "../../bench/_scenario_report.ts";

/** Runs the benchmark on `dir`'s scenarios, its report in `out`. */
async function bench(dir: string, out: string, ...more: string[]) {
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-run",
      "--allow-sys",
      join(ROOT, "bench/scenarios.ts"),
      "--dir",
      dir,
      "--out",
      out,
      ...more,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: run.code, stdout: decoder.decode(run.stdout), stderr: decoder.decode(run.stderr) };
}

const ANSWER = {
  name: "answer",
  area: "runner",
  files: { "a.txt": "alpha\n" },
  turns: [
    { toolCalls: [{ name: "read", arguments: '{"path":"a.txt"}' }] },
    { text: "It says alpha." },
  ],
  steps: [{
    args: ["run", "--base-url", "{baseUrl}", "-m", "scripted", "-o", "json", "read a"],
    json: { exitReason: "COMPLETED", text: "It says alpha." },
  }],
  expect: { requests: 2, sent: ["tool: SUCCEEDED[\\s\\S]*alpha"], files: { "a.txt": "alpha\n" } },
};

Deno.test("bench/scenarios.ts passes a true scenario, fails a false one, and reports both", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "tern-scenarios-test-" });
  try {
    const dir = join(tmp, "scenarios");
    await Deno.mkdir(dir);
    const wrong = {
      ...ANSWER,
      name: "wrong file",
      expect: { files: { "a.txt": "beta\n" } },
    };
    await Deno.writeTextFile(join(dir, "s.json"), JSON.stringify([ANSWER, wrong]));
    const run = await bench(dir, join(tmp, "out"));
    equal(run.code, 1, run.stderr);
    match(run.stdout, /^ok {3}runner \/ answer/m);
    match(run.stdout, /^FAIL runner \/ wrong file/m);
    match(run.stdout, /a\.txt is "alpha\\n"/);
    match(run.stdout, /scenarios: 1 passed, 1 failed, 0 skipped/);
    const report = await Deno.readTextFile(join(tmp, "out", "scenarios.md"));
    match(report, /\| runner \| answer \| pass \|/);
    match(report, /\| runner \| wrong file \| FAIL \|/);
    match(report, /- deno: \d+\.\d+\.\d+/);
    const json = JSON.parse(await Deno.readTextFile(join(tmp, "out", "scenarios.json")));
    equal(json.results.length, 2);
    equal(json.results[0].status, "pass");
    equal(json.results[0].requests, 2);
    equal(json.results[1].status, "fail");
    ok(json.results[0].ms > 0);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("bench/scenarios.ts runs a scenario of the benchmark itself and exits 0", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "tern-scenarios-test-" });
  try {
    const run = await bench(
      join(ROOT, "bench/scenarios"),
      tmp,
      "--filter",
      "^exit reasons / a text",
    );
    equal(run.code, 0, run.stdout + run.stderr);
    match(run.stdout, /scenarios: 1 passed, 0 failed, 0 skipped/);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("loadScenarios() reads at least 40 scenarios with unique names", async () => {
  const all = await loadScenarios(join(ROOT, "bench/scenarios"));
  ok(all.length >= 40, `${all.length} scenarios`);
  equal(new Set(all.map(({ scenario }) => scenario.name)).size, all.length);
});
