/**
 * What per-turn checkpoints cost on a 10,000-file workspace (not a git repository): the first
 * snapshot of a session (everything hashed once), a snapshot of the unchanged tree, and the
 * latency a turn that changes one file gains against the same turn without checkpoints, when
 * each model round (the first call, the final answer) takes 0 ms and 300 ms: the snapshots run
 * while the model thinks.
 * Run: deno run --no-prompt --allow-read --allow-write --allow-env --allow-run --allow-sys
 * bench/rewind_bench.ts [--files 10000] [--runs 30] [--json]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ShadowStore } from "../src/harness/rewind/shadow_store.ts";
import { TurnCheckpoints } from "../src/harness/rewind/turn_checkpoints.ts";
import { ToolRegistry } from "../src/tools/registry.ts";
import type { Tool } from "../src/tools/define.ts";
import { stats } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    files: { type: "string", default: "10000" },
    runs: { type: "string", default: "30" },
    json: { type: "boolean", default: false },
  },
});
const FILES = Number(values.files);
const RUNS = Number(values.runs);

const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "rewind-bench-" }));
const ws = join(root, "ws");
const sessions = join(root, "sessions");
await Deno.mkdir(ws);
await Deno.mkdir(sessions);
// 100 folders of 100 files of 1-4 KiB, a .gitignore and an ignored build folder.
for (let d = 0; d < FILES / 100; d++) {
  const folder = join(ws, `pkg${d}`, "src");
  await Deno.mkdir(folder, { recursive: true });
  for (let f = 0; f < 100; f++) {
    const text = `// file ${d}/${f}\n${"export const x = 1;\n".repeat(50 + (f % 150))}`;
    await Deno.writeTextFile(join(folder, `m${f}.ts`), text);
  }
}
await Deno.writeTextFile(join(ws, ".gitignore"), "build/\n");
await Deno.mkdir(join(ws, "build"));
for (let f = 0; f < 500; f++) await Deno.writeTextFile(join(ws, "build", `o${f}.js`), "x");

async function time(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const store = await ShadowStore.open(join(sessions, "rewind.git"), ws, {
  indexName: "bench",
  maxFileBytes: 10 * 1024 * 1024,
});
const first = await time(() => store.snapshot());

// A fresh store object each time: nothing remembered in memory, only the index on disk.
const unchanged: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const fresh = await ShadowStore.open(join(sessions, "rewind.git"), ws, {
    indexName: "bench",
    maxFileBytes: 10 * 1024 * 1024,
  });
  unchanged.push(await time(() => fresh.snapshot()));
}

// One turn that edits one file: wrapped (checkpointed) against unwrapped.
let round = 0;
const edit: Tool = {
  name: "write",
  description: "",
  readOnly: false,
  runsIn: "worker",
  parameters: {},
  paths: () => Promise.resolve([{ path: "pkg1/src/m1.ts", write: true }]),
  run: async () => {
    await Deno.writeTextFile(join(ws, "pkg1", "src", "m1.ts"), `// turn ${round++}\n`);
    return { status: "OK", output: "" };
  },
} as unknown as Tool;
const sessionPath = join(sessions, "2026-12-02T00-00-00-000Z_bench.jsonl");
const checkpoints = new TurnCheckpoints({
  sessionPath,
  sessionId: "bench",
  workspace: ws,
  warn: (text) => console.error(text),
  rules: () => [],
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * A turn: the model answers after `modelMs` with one call writing one file, then after
 * `modelMs` more with its final text. Returns the turn's time with checkpoints less the same
 * turn's without.
 */
async function turn(i: number, modelMs: number): Promise<number> {
  const plainMs = await time(async () => {
    await sleep(modelMs);
    await edit.run({}, {} as never);
    await sleep(modelMs);
  });
  const wrappedMs = await time(async () => {
    const tools = checkpoints.wrap(new ToolRegistry([edit]), `e${modelMs}-${i}`);
    await sleep(modelMs);
    await tools.get("write")!.run({}, {} as never);
    await sleep(modelMs);
    await checkpoints.endTurn();
  });
  await checkpoints.idle();
  return wrappedMs - plainMs;
}
const MODEL_MS = [0, 300];
const turns: Record<number, number[]> = {};
for (const modelMs of MODEL_MS) {
  turns[modelMs] = [];
  for (let i = 0; i < RUNS; i++) turns[modelMs].push(await turn(i, modelMs));
}
// A turn whose calls are all read-only: the snapshot at its start, work behind the model call.
const readOnly: number[] = [];
for (let i = 0; i < RUNS; i++) {
  readOnly.push(
    await time(async () => {
      checkpoints.wrap(new ToolRegistry([edit]), `r${i}`);
      await checkpoints.endTurn();
      await checkpoints.idle();
    }),
  );
}

const result = {
  files: FILES,
  runs: RUNS,
  firstSnapshotMs: Math.round(first),
  unchangedSnapshot: stats(unchanged),
  writingTurnAdded: Object.fromEntries(
    MODEL_MS.map((ms) => [`model${ms}ms`, stats(turns[ms])]),
  ),
  readOnlyTurnWork: stats(readOnly),
};
await checkpoints.idle();
await Deno.remove(root, { recursive: true });
if (values.json) {
  console.log(JSON.stringify(result));
} else {
  console.log(`files: ${FILES}, runs: ${RUNS}`);
  console.log(`first snapshot of the session (hashes everything): ${result.firstSnapshotMs} ms`);
  const line = (name: string, s: ReturnType<typeof stats>) =>
    console.log(`${name}: median ${s.median} ms, p90 ${s.p90} ms, min ${s.min} ms`);
  line("snapshot of the unchanged tree", result.unchangedSnapshot);
  for (const ms of MODEL_MS) {
    line(`writing turn, each model round ${ms} ms: added latency`, stats(turns[ms]));
  }
  line("read-only turn: snapshot work, behind the model call", result.readOnlyTurnWork);
}
