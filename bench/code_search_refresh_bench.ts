/**
 * What code_search's refresh costs before a search, in tern's process, on a workspace (default
 * this checkout; the index goes to a temporary TERN_HOME): the first search (the whole index
 * built), a search with nothing changed, one after a command ran (an lstat walk, nothing read),
 * and one after the agent wrote one file. Prints a markdown table of medians.
 *
 * Usage: deno run -A bench/code_search_refresh_bench.ts [workspace] [runs]
 */
import { join } from "node:path";
import { LiveCodeIndex } from "../src/harness/code_index_live.ts";
import { stats } from "./_stats.ts";

const workspace = await Deno.realPath(Deno.args[0] ?? ".");
const runs = Number(Deno.args[1] ?? 7);
const signal = new AbortController().signal;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const times: Record<string, number[]> = { first: [], unchanged: [], command: [], write: [] };
let files = 0;
for (let run = 0; run < runs; run++) {
  const home = await Deno.makeTempDir({ prefix: "tern-bench-idx-" });
  const index = new LiveCodeIndex({
    workspace,
    file: join(home, "index.sqlite"),
    budgetMs: 600_000,
    maxFiles: 1_000_000,
    rewalkMs: 3_600_000,
  });
  const search = () => index.search("parse command line arguments", { limit: 8, signal });
  try {
    times.first.push(await timed(search));
    files = index.lastRefresh.checked;
    times.unchanged.push(await timed(search));
    index.markChanged();
    times.command.push(await timed(search));
    // The write tool rewrote one file (same content: the check reads and hashes it).
    index.markChanged(["deno.json"]);
    times.write.push(await timed(search));
  } finally {
    index.close();
    await Deno.remove(home, { recursive: true });
  }
}

console.log(`code_search refresh on ${workspace} (${files} files), median of ${runs} runs:\n`);
console.log("| search | median ms | p90 | min |");
console.log("| --- | ---: | ---: | ---: |");
const labels: Record<string, string> = {
  first: "first (builds the index)",
  unchanged: "nothing changed",
  command: "after a command (lstat walk)",
  write: "after one written file",
};
for (const [key, values] of Object.entries(times)) {
  const s = stats(values);
  console.log(
    `| ${labels[key]} | ${s.median.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.min.toFixed(1)} |`,
  );
}
