/** Loading the scenario files, and the benchmark's Markdown report. */
import { join } from "../src/core/path.ts";
import type { Scenario, ScenarioResult } from "./_scenario_types.ts";

/** Every scenario of `dir`'s *.json files (each an array of scenarios), files in name order. */
export async function loadScenarios(
  dir: string,
): Promise<Array<{ scenario: Scenario; file: string }>> {
  const names = (await Array.fromAsync(Deno.readDir(dir)))
    .filter((entry) => entry.isFile && entry.name.endsWith(".json"))
    .map((entry) => entry.name)
    .sort();
  const out: Array<{ scenario: Scenario; file: string }> = [];
  const seen = new Set<string>();
  for (const name of names) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await Deno.readTextFile(join(dir, name)));
    } catch (error) {
      throw new Error(`Cannot read scenarios "${name}": ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new Error(`Cannot read scenarios "${name}": not an array`);
    for (const scenario of parsed as Scenario[]) {
      if (typeof scenario.name !== "string" || !Array.isArray(scenario.steps)) {
        throw new Error(`Cannot read scenarios "${name}": a scenario lacks a name or steps`);
      }
      if (seen.has(scenario.name)) {
        throw new Error(`Cannot read scenarios "${name}": "${scenario.name}" is there twice`);
      }
      seen.add(scenario.name);
      out.push({ scenario, file: name });
    }
  }
  return out;
}

/** The report: environment, totals, then each scenario by area. Machine-written. */
export function markdownReport(
  environment: Record<string, unknown>,
  results: ScenarioResult[],
  wallMs: number,
): string {
  const count = (status: string) => results.filter((r) => r.status === status).length;
  const lines = [
    "# Scenario benchmark",
    "",
    "Machine-written by `deno task bench:scenarios` (bench/scenarios.ts) from",
    "bench/scenarios/*.json: each scenario runs the real `tern` process against the scripted",
    "model server on 127.0.0.1. Do not edit by hand.",
    "",
    "## Environment",
    "",
    ...Object.entries(environment).map(([key, value]) => `- ${key}: ${value}`),
    "",
    `**${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped** of ` +
    `${results.length}, in ${(wallMs / 1000).toFixed(1)} s wall time.`,
    "",
    "| area | scenario | result | time (s) | tern runs | model requests |",
    "| --- | --- | --- | ---: | ---: | ---: |",
  ];
  const sorted = [...results].sort((a, b) => a.area.localeCompare(b.area));
  for (const r of sorted) {
    const mark = r.status === "pass" ? "pass" : r.status === "skip" ? `skip (${r.detail})` : "FAIL";
    lines.push(
      `| ${r.area} | ${r.name} | ${mark} | ${
        (r.ms / 1000).toFixed(1)
      } | ${r.steps} | ${r.requests} |`,
    );
  }
  const failures = results.filter((r) => r.status === "fail");
  if (failures.length > 0) {
    lines.push("", "## Failures", "");
    for (const r of failures) {
      lines.push(`### ${r.name}`, "", "```", (r.detail ?? "").slice(0, 3000), "```", "");
    }
  }
  return lines.join("\n") + "\n";
}
