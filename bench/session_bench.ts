/**
 * Session load benchmark (issue 4, part 8), run as a script:
 * `deno run -A bench/session_bench.ts [runs]`.
 *
 * Writes a 10,000-entry session of about 50 MB with `SessionWriter` into a temp folder: turns of
 * a user message, assistant messages with tool calls, tool results of varying size (slices of
 * tern's own source, a few of about 200 KB), model/mode changes, labels and a branch now and
 * then. Then times `loadSession` + `new SessionTree` + `tree.path()` (the work of resuming,
 * before replay) in `runs` fresh processes (default 5; `--load <file>` is one such run) and
 * compares the median with the 500 ms target. Does it twice: with the source text as it is
 * (mostly non-ASCII lines) and with it made ASCII. Writes bench/results/sessions.md.
 */
import { dirname, join, relative } from "node:path";
import { loadSession } from "../src/session/load.ts";
import { SessionWriter } from "../src/session/store.ts";
import { SessionTree } from "../src/session/tree.ts";

const ENTRIES = 10_000;
const TARGET_MS = 500;
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");
const COMMAND = "deno run -A bench/session_bench.ts";

/** A small seeded generator, so every run writes the same session. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Tool outputs are slices of this: real code, with quotes, backslashes and newlines to escape.
 * tern's comments are rich in "—" and "→", so most slices hold non-ASCII text, which V8 keeps
 * in two-byte strings; `ascii` replaces those characters with "-" to show what that costs.
 */
function corpus(ascii: boolean): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith(".ts")) parts.push(Deno.readTextFileSync(path));
    }
  };
  walk(join(ROOT, "src"));
  let text = parts.join("\n// ---- next file ----\n");
  if (ascii) text = text.replace(/[^\t\n\r -~]/g, "-");
  // Long enough that a 200 KB slice exists.
  return text.length > 300_000 ? text : text.repeat(Math.ceil(300_000 / text.length));
}

/** Writes the benchmark session; returns its path. */
async function writeSession(home: string, ascii: boolean): Promise<string> {
  const next = random(4);
  const text = corpus(ascii);
  const pasted = ascii ? "" : " (日本語のメモ)";
  const slice = (size: number) => {
    const start = Math.floor(next() * (text.length - size));
    return text.slice(start, start + size);
  };
  const between = (low: number, high: number) => Math.floor(low + next() * (high - low));
  const writer = await SessionWriter.create(home, { cwd: "/bench/project", ternVersion: "bench" });
  const ids: string[] = [];
  const add = (entry: Parameters<SessionWriter["append"]>[0], parentId?: string | null) => {
    ids.push(writer.append(entry, parentId === undefined ? {} : { parentId }).id);
  };
  add({ type: "model", model: "bench-model", provider: "scripted" });
  let call = 0;
  while (ids.length < ENTRIES) {
    add({
      type: "message",
      message: {
        role: "user",
        content: `Please look at this${pasted}: ${slice(between(80, 1500))}`,
      },
    });
    const rounds = between(1, 8);
    for (let round = 0; round < rounds && ids.length < ENTRIES - 2; round++) {
      const id = `call_${call++}`;
      add({
        type: "message",
        message: {
          role: "assistant",
          content: slice(between(50, 1200)),
          toolCalls: [{ id, name: "read", arguments: JSON.stringify({ path: "src/a.ts" }) }],
        },
        usage: { inputTokens: 9000, outputTokens: 300, cachedTokens: 8000, reasoningTokens: 0 },
      });
      const roll = next();
      const size = roll < 0.006
        ? between(150_000, 250_000)
        : roll < 0.5
        ? between(200, 4000)
        : between(5000, 26_000);
      add({
        type: "message",
        message: { role: "tool", toolCallId: id, name: "read", content: slice(size) },
      });
    }
    add({ type: "message", message: { role: "assistant", content: slice(between(100, 2000)) } });
    const roll = next();
    if (roll < 0.05) add({ type: "mode", mode: next() < 0.5 ? "plan" : "default" });
    else if (roll < 0.08) {
      add({ type: "label", targetId: ids[ids.length - 1], label: "checkpoint" });
    } else if (roll < 0.11 && ids.length > 100) {
      // Continue from an older entry, as `/tree` or `--resume` at an entry does.
      const from = ids[ids.length - between(10, 100)];
      add({ type: "branch", fromId: writer.leafId, summary: slice(300) }, from);
    }
  }
  writer.close();
  return writer.path;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** What one timed run saw. */
interface Run {
  ms: number;
  entries: number;
  pathLength: number;
  branches: number;
  warnings: number;
}

/** The timed work, in this process: load, build the tree, walk to the leaf. */
async function timeLoad(path: string): Promise<Run> {
  const start = performance.now();
  const loaded = await loadSession(path);
  const tree = new SessionTree(loaded.entries);
  const leafPath = tree.path();
  const ms = performance.now() - start;
  return {
    ms,
    entries: loaded.entries.length,
    pathLength: leafPath.length,
    branches: loaded.entries.filter((entry) => entry.type === "branch").length,
    warnings: loaded.warnings.length + tree.warnings.length,
  };
}

/** One run in a fresh `deno` process, as `tern --resume` would load the session. */
async function timeLoadInChild(path: string): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", new URL(import.meta.url).pathname, "--load", path],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`The load run failed with code ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** One session written and loaded `runs` times. */
interface Measured {
  text: string;
  mb: number;
  runs: Run[];
  median: number;
}

async function measure(home: string, ascii: boolean, runs: number): Promise<Measured> {
  const path = await writeSession(home, ascii);
  try {
    const mb = (await Deno.stat(path)).size / 1024 / 1024;
    const results: Run[] = [];
    for (let run = 0; run < runs; run++) results.push(await timeLoadInChild(path));
    if (results.some((run) => run.entries !== ENTRIES || run.warnings !== 0)) {
      throw new Error(`The session did not load whole: ${JSON.stringify(results)}`);
    }
    const text = ascii ? "ASCII only" : "source as is";
    return { text, mb, runs: results, median: median(results.map((run) => run.ms)) };
  } finally {
    await Deno.remove(path);
  }
}

function markdown(measured: Measured[], date: string): string {
  const [first] = measured;
  const rows = measured.map((m) =>
    `| ${m.text} | ${m.runs[0].entries} | ${round1(m.mb)} | ${round1(m.median)} ms | ` +
    `< ${TARGET_MS} ms | ${m.median < TARGET_MS ? "PASS" : "FAIL"} | ${date} | \`${COMMAND}\` |`
  );
  return [
    `# Session load benchmark (${date}, Deno ${Deno.version.deno})`,
    "",
    `Measured by \`${COMMAND}\` on the project machine, which is shared with other work.`,
    "Each run is a fresh `deno` process (as a resume is) timing `loadSession` (read a line at a",
    "time, `JSON.parse` per line) + `new SessionTree(entries)` + `tree.path()` to the leaf, with",
    "the file in the page cache; start-up is not counted. The median is over the runs listed.",
    "",
    "The session is written by `SessionWriter`: user, assistant and tool messages (tool outputs",
    "of 200 B to 250 KB, slices of tern's own source), model, mode and label entries, and",
    `${first.runs[0].branches} branches; the path to the leaf holds ${first.runs[0].pathLength} ` +
    'entries. tern\'s source is rich in "—" and "→", so most entries of the first session',
    "hold non-ASCII text, which V8 stores in two-byte strings once parsed (twice the memory);",
    'the second session is the same with those characters replaced by "-". The writer escapes',
    "non-ASCII characters (`\\uXXXX`), so every line on disk is ASCII and decodes into a",
    "one-byte string: that took the first session from about 600 to about 500 ms here.",
    "",
    `- machine: ${navigator.hardwareConcurrency} cores, ${Deno.build.os} ${Deno.build.arch}, ` +
    `load average ${Deno.loadavg().map(round1).join(", ")} (1, 5, 15 min)`,
    ...measured.map((m) =>
      `- runs, ${m.text} (ms): ${m.runs.map((run) => round1(run.ms)).join(", ")}`
    ),
    "",
    "| text | entries | MB | median | target | result | date | command |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

async function main(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 5);
  const home = await Deno.makeTempDir({ prefix: "tern-session-bench-" });
  try {
    const measured = [await measure(home, false, runs), await measure(home, true, runs)];
    const text = markdown(measured, new Date().toISOString().slice(0, 10));
    const out = join(ROOT, "bench/results/sessions.md");
    await Deno.writeTextFile(out, text);
    console.log(text);
    console.log(`Wrote ${relative(Deno.cwd(), out)}`);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

// `deno bench bench/` loads this file too (its name ends in _bench.ts): run only as a script.
if (import.meta.main) {
  if (Deno.args[0] === "--load") console.log(JSON.stringify(await timeLoad(Deno.args[1])));
  else await main(Deno.args);
}
