/**
 * The scenario benchmark (issue 28): every scenario of bench/scenarios/*.json runs through the
 * real `tern` process and the real HTTP provider code against a scripted model server on
 * 127.0.0.1, two at a time; writes bench/results/scenarios.md and .json (the environment, each
 * scenario's pass/fail and timing) and exits 1 when any scenario fails.
 *
 * Usage: deno task bench:scenarios [--filter <regexp on "area / name">] [--dir <scenarios dir>] [--out <results
 * dir>] [--concurrency <n>]. With TERN_BENCH_ENTRY=<dist/tern.js> the scenarios run that single
 * file (bin/compile --bundle) instead of main.ts.
 */
import { parseArgs } from "node:util";
import { join } from "../src/core/path.ts";
import { bwrapNeed, referenceServersNeed } from "../tests/support/needs.ts";
import { ROOT } from "../tests/support/tern_process.ts";
import { runScenario } from "./_scenario_run.ts";
import { loadScenarios, markdownReport } from "./_scenario_report.ts";
import type { ScenarioResult } from "./_scenario_types.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    filter: { type: "string" },
    dir: { type: "string", default: join(ROOT, "bench/scenarios") },
    out: { type: "string", default: join(ROOT, "bench/results") },
    concurrency: { type: "string", default: "2" },
  },
});

const missing = new Set<string>();
if (!bwrapNeed.ok) missing.add("bwrap");
if (!referenceServersNeed.ok) missing.add("mcp");
const rg = await new Deno.Command("rg", { args: ["--version"], stdout: "null", stderr: "null" })
  .output().then((out) => out.success, () => false);
if (!rg) missing.add("rg");

const all = await loadScenarios(values.dir!);
const chosen = all.filter(({ scenario }) =>
  values.filter === undefined ||
  new RegExp(values.filter).test(`${scenario.area} / ${scenario.name}`)
);
const concurrency = Math.max(1, Number(values.concurrency));
const started = performance.now();
const results: ScenarioResult[] = new Array(chosen.length);
let next = 0;
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < chosen.length) {
    const index = next++;
    const { scenario, file } = chosen[index];
    const result = await runScenario(scenario, file, missing);
    results[index] = result;
    const mark = result.status === "pass" ? "ok  " : result.status === "skip" ? "skip" : "FAIL";
    console.log(`${mark} ${scenario.area} / ${scenario.name} (${(result.ms / 1000).toFixed(1)} s)`);
    if (result.status === "fail") console.log(`     ${result.detail?.split("\n").join("\n     ")}`);
  }
}));
const wallMs = performance.now() - started;

const environment = {
  date: new Date().toISOString(),
  deno: Deno.version.deno,
  os: `${Deno.build.os} ${Deno.build.arch} ${Deno.osRelease()}`,
  cpus: navigator.hardwareConcurrency,
  bwrap: !missing.has("bwrap"),
  ripgrep: rg,
  mcpReferenceServers: !missing.has("mcp"),
  concurrency,
  filter: values.filter ?? null,
};
await Deno.mkdir(values.out!, { recursive: true });
await Deno.writeTextFile(
  join(values.out!, "scenarios.json"),
  JSON.stringify({ environment, wallMs: Math.round(wallMs), results }, null, 2) + "\n",
);
await Deno.writeTextFile(
  join(values.out!, "scenarios.md"),
  markdownReport(environment, results, wallMs),
);
const failed = results.filter((r) => r.status === "fail").length;
const skipped = results.filter((r) => r.status === "skip").length;
console.log(
  `scenarios: ${results.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped ` +
    `in ${(wallMs / 1000).toFixed(1)} s (${join(values.out!, "scenarios.md")})`,
);
if (failed > 0 || results.length === 0) Deno.exit(1);
