/**
 * The first `code_search` of a session over a workspace of many files, through a real
 * `tern run` (bin/tern: the bundle, the tool worker in bubblewrap, which reads each file for the
 * index) against the scripted model: the run's wall time, start to exit, with a fresh TERN_HOME
 * each run (no index yet). What a first search costs where the index reads through the worker.
 * Run: deno run -A --config deno.json bench/code_search_first_bench.ts [--files 2000] [--runs 3]
 *   [--root <checkout>] (another checkout's bin/tern, for an A/B; this one's by default)
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { scriptedRunArgs } from "../tests/support/tern_process.ts";
import { stats } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    files: { type: "string", default: "2000" },
    runs: { type: "string", default: "3" },
    root: { type: "string", default: join(import.meta.dirname!, "..") },
  },
});
const FILES = Number(values.files);
const RUNS = Number(values.runs);

const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "code-search-first-" }));
const ws = join(root, "ws");
for (let i = 0; i < FILES; i++) {
  const folder = join(ws, `pkg${i % 40}`);
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(
    join(folder, `mod${i}.ts`),
    `/** Module ${i}: sums and scales. */\nexport function sum${i}(a: number, b: number): number {\n` +
      `  return a + b + ${i};\n}\n\nexport class Scaler${i} {\n  constructor(private k: number) {}\n` +
      `  scale(x: number): number {\n    return x * this.k;\n  }\n}\n`,
  );
}
const server = await startScriptedServer(
  ((_request: unknown, i: number) =>
    i % 2 === 0
      ? {
        toolCalls: [{
          id: "s1",
          name: "code_search",
          arguments: '{"query":"scale a number by a factor"}',
        }],
      }
      : { text: "done" }) as unknown as ScriptedReply[],
  { chunkDelayMs: 0 },
);
const walls: number[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const home = join(root, `home${run}`);
    await Deno.mkdir(home);
    const started = performance.now();
    const out = await new Deno.Command(join(values.root, "bin", "tern"), {
      args: scriptedRunArgs(server.baseUrl, "go", false),
      cwd: ws,
      env: { HOME: home, TERN_HOME: home },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`tern run failed:\n${new TextDecoder().decode(out.stderr)}`);
    walls.push(performance.now() - started);
  }
} finally {
  await server.close();
  await Deno.remove(root, { recursive: true });
}
console.log(JSON.stringify({ files: FILES, runs: RUNS, wallMs: stats(walls) }));
