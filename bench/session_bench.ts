/**
 * Session load benchmark (issue 4, part 8): `deno run -A bench/session_bench.ts [runs]
 * [--v8-flags=<flags>]`. Writes a 10,000-entry session of about 50 MB with `SessionWriter`
 * (messages with tool outputs sliced from tern's source, a few of about 200 KB; model, mode,
 * label and branch entries), twice: source text as is (mostly non-ASCII) and made ASCII. Then
 * times what `tern run --resume <id>` does before its first request (`findSession`,
 * `Session.open`, `session.state()`) in `runs` fresh processes (default 7; `--resume <home> <id>`
 * is one run), taking turns with the floor (an empty `deno run`) and a fresh-memory probe.
 * The timed processes get the V8 flags tern's launcher gives tern (`--v8-flags` in
 * bin/_env.sh). Writes bench/results/sessions.md, or with `--v8-flags=<flags>` (given to the
 * timed processes instead, to try others) only prints. `--write <home>` only writes the two
 * sessions into `home` and prints their ids (to time them with other code, or `farm-bench`).
 */
import { dirname, join, relative } from "node:path";
import process from "node:process";
import { findSession } from "../src/session/paths.ts";
import { Session } from "../src/session/session.ts";
import { loadSession } from "../src/session/load.ts";
import { SessionTree } from "../src/session/tree.ts";
import { declaredFlags } from "../tests/support/tern_process.ts";

const ENTRIES = 10_000;
const TARGET_MS = 500;
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");
const COMMAND = "deno run -A bench/session_bench.ts";
/** The workspace the benchmark session belongs to (`--resume` looks there first). */
const CWD = "/bench/project";
/**
 * Text since the last compaction at which the session compacts, in characters: about 80 % of a
 * 200,000-token window at 4 characters a token, when tern would compact.
 */
const COMPACT_AT_CHARS = 640_000;
/** Fresh memory touched by each calibration run. */
const TOUCH_MB = 64;

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

/** Writes the benchmark session; returns its id. */
function writeSession(home: string, ascii: boolean): string {
  const next = random(4);
  const text = corpus(ascii);
  const pasted = ascii ? "" : " (日本語のメモ)";
  const slice = (size: number) => {
    const start = Math.floor(next() * (text.length - size));
    return text.slice(start, start + size);
  };
  const between = (low: number, high: number) => Math.floor(low + next() * (high - low));
  const writer = Session.create(home, { cwd: CWD, ternVersion: "bench" });
  const ids: string[] = [];
  let chars = 0;
  const add = (entry: Parameters<Session["append"]>[0]) => {
    const written = writer.append(entry);
    ids.push(written.id);
    if (written.type === "message") chars += written.message.content.length;
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
      ids.push(writer.branchFrom(from, slice(300)).id);
    }
    if (chars > COMPACT_AT_CHARS && ids.length < ENTRIES) {
      // As tern compacts: the last request and what followed it are kept.
      const { items } = writer.state();
      const kept = items.findLast((item) => item.message.role === "user")?.id ?? null;
      add({
        type: "compaction",
        summary: slice(6000),
        firstKeptId: kept,
        tokensBefore: Math.round(chars / 4),
        tokensAfter: 2000,
        summarised: [],
        fallback: false,
      });
      chars = 0;
    }
  }
  writer.close();
  return writer.header.id;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Memory this process has faulted in so far, in MB (minor page faults × 4 KiB). */
function faultedMb(): number {
  return process.resourceUsage().minorPageFault * 4096 / 1024 / 1024;
}

/** What one timed resume saw. */
interface Run {
  /** findSession + Session.open + state(): the number compared with the target. */
  ms: number;
  findMs: number;
  openMs: number;
  stateMs: number;
  /** Fresh memory the timed work faulted in. */
  freshMb: number;
  entries: number;
  pathLength: number;
  compactions: number;
  messages: number;
  branches: number;
  warnings: number;
}

/** The timed work, in this process: what `tern run --resume <id>` does before its request. */
async function timeResume(home: string, id: string): Promise<Run> {
  const faulted = faultedMb();
  const start = performance.now();
  const path = await findSession(home, id, CWD);
  const found = performance.now();
  const session = await Session.open(path);
  const opened = performance.now();
  const state = session.state();
  const messages = state.items.map((item) => item.message);
  const end = performance.now();
  const freshMb = faultedMb() - faulted;
  const warnings = session.warnings.length;
  session.close();
  // Counted after the timing: the resume itself does not read the whole file.
  const all = (await loadSession(path)).entries;
  return {
    ms: end - start,
    findMs: found - start,
    openMs: opened - found,
    stateMs: end - opened,
    freshMb,
    entries: all.length,
    pathLength: new SessionTree(all).path().length,
    compactions: all.filter((entry) => entry.type === "compaction").length,
    messages: messages.length,
    branches: all.filter((entry) => entry.type === "branch").length,
    warnings,
  };
}

/** Runs this script in a fresh `deno` process with `args`; returns its parsed stdout. */
async function child<T>(args: string[], v8Flags = launcherV8Flags()): Promise<T> {
  const flags = v8Flags ? [`--v8-flags=${v8Flags}`] : [];
  const script = new URL(import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", "--allow-write", ...flags, script, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`The run ${args.join(" ")} failed with code ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The V8 flags bin/tern starts tern with (none when it gives none). */
function launcherV8Flags(): string | undefined {
  const flag = declaredFlags().find((arg) => arg.startsWith("--v8-flags="));
  return flag?.slice("--v8-flags=".length);
}

/** Milliseconds to fault in `mb` MB of fresh memory, in this process. */
function touch(mb: number): number {
  const start = performance.now();
  const bytes = new Uint8Array(mb * 1024 * 1024);
  for (let at = 0; at < bytes.length; at += 4096) bytes[at] = 1;
  return performance.now() - start;
}

/** Start to exit of `deno run` on an empty script: what any process costs right now. */
async function floor(empty: string): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args: ["run", empty] }).output();
  if (!out.success) throw new Error(`The empty run failed with code ${out.code}`);
  return performance.now() - start;
}

/** One session and its runs. */
interface Measured {
  text: string;
  id: string;
  mb: number;
  runs: Run[];
}

/** Everything one benchmark run measured; the runs of each kind take turns. */
interface Results {
  sessions: Measured[];
  floorMs: number[];
  touchMs: number[];
  load: { before: number[]; after: number[] };
}

async function measureAll(home: string, runs: number, v8Flags?: string): Promise<Results> {
  const empty = join(home, "empty.ts");
  await Deno.writeTextFile(empty, "");
  const sessions: Measured[] = [];
  for (const ascii of [false, true]) {
    const id = writeSession(home, ascii);
    const mb = (await Deno.stat(await findSession(home, id, CWD))).size / 1024 / 1024;
    sessions.push({ text: ascii ? "ASCII only" : "source as is", id, mb, runs: [] });
  }
  const results: Results = {
    sessions,
    floorMs: [],
    touchMs: [],
    load: { before: Deno.loadavg(), after: [] },
  };
  for (let run = 0; run < runs; run++) {
    results.floorMs.push(await floor(empty));
    results.touchMs.push(await child<number>(["--touch", String(TOUCH_MB)]));
    for (const session of sessions) {
      session.runs.push(await child<Run>(["--resume", home, session.id], v8Flags));
    }
  }
  results.load.after = Deno.loadavg();
  for (const { runs: all } of sessions) {
    if (all.some((run) => run.entries !== ENTRIES || run.warnings !== 0)) {
      throw new Error(`The session did not resume whole: ${JSON.stringify(all)}`);
    }
  }
  return results;
}

function markdown(results: Results, date: string, v8Flags?: string): string {
  const { sessions, floorMs, touchMs, load } = results;
  const [first] = sessions[0].runs;
  const msPerMb = median(touchMs) / TOUCH_MB;
  const command = `${COMMAND}${v8Flags ? ` --v8-flags=${v8Flags}` : ""}`;
  const list = (values: number[]) => values.map(round1).join(", ");
  const of = (m: Measured, key: "ms" | "findMs" | "openMs" | "stateMs" | "freshMb") =>
    round1(median(m.runs.map((run) => run[key])));
  return [
    `# Session load benchmark (${date}, Deno ${Deno.version.deno})`,
    "",
    `Measured by \`${command}\` on the project machine, which is shared with other work.`,
    "Each run is a fresh `deno` process timing what `tern run --resume <id>` does before its",
    "first request: `findSession` (id to path), `Session.open` (lock, read the file from its",
    "end back to the last compaction on the leaf's path, `JSON.parse` per line, index the",
    "entries; src/session/tail.ts) and `session.state()` (the state replayed at opening). The",
    "file is in the page cache; start-up is not counted. Medians are over the runs listed; the",
    "kinds of run take turns.",
    "",
    "The session is written by `Session`, as tern writes it: user, assistant and tool messages",
    "(tool outputs of 200 B to 250 KB, slices of tern's own source), model, mode and label",
    `entries, ${first.branches} branches, and ${first.compactions} compactions (one whenever ` +
    `the messages since the last reach ${COMPACT_AT_CHARS.toLocaleString("en")} characters, ` +
    "about 80 % of a 200,000-token window, keeping the last request); the path to the leaf " +
    `holds ${first.pathLength} entries and replays into ${first.messages} messages.`,
    'tern\'s source is rich in "—" and "→", so most messages of the first session hold non-ASCII',
    "text, which V8 keeps in two-byte strings once parsed (twice the memory); the second session",
    'is the same with those characters replaced by "-". Every line on disk is ASCII either way',
    "(the writer escapes other characters as `\\uXXXX`).",
    "",
    "Most of the time is fresh memory (pages a process touches for the first time are dear on",
    "this virtual machine): the parsed messages plus V8's young generation, which would grow to",
    "16-32 MB per semi-space while that many objects survive. The timed processes get the V8",
    `flags tern's launcher gives tern (\`${
      v8Flags ?? launcherV8Flags() ?? "none"
    }\`), which keep it small`,
    "(about 30 % less time and memory here). The last column prices fresh memory at the probe's rate.",
    "",
    `- machine: ${navigator.hardwareConcurrency} cores, ${Deno.build.os} ${Deno.build.arch}, ` +
    `load average ${list(load.before)} before, ${list(load.after)} after (1, 5, 15 min)`,
    `- floor (an empty \`deno run\`, start to exit): median ${round1(median(floorMs))} ms ` +
    `(${list(floorMs)})`,
    `- fresh memory: ${TOUCH_MB} MB touched in a fresh process, median ${
      round1(median(touchMs))
    } ms (${list(touchMs)}): ${round1(msPerMb * 10)} ms per 10 MB`,
    ...sessions.map((m) => `- runs, ${m.text} (ms): ${list(m.runs.map((run) => run.ms))}`),
    "",
    "| text | find | open (read, parse, index) | state (path, replay) | fresh memory | its cost |",
    "| --- | --- | --- | --- | --- | --- |",
    ...sessions.map((m) =>
      `| ${m.text} | ${of(m, "findMs")} ms | ${of(m, "openMs")} ms | ${of(m, "stateMs")} ms | ` +
      `${of(m, "freshMb")} MB | ~${Math.round(of(m, "freshMb") * msPerMb)} ms |`
    ),
    "",
    "| text | entries | MB | median | target | result | date | command |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...sessions.map((m) =>
      `| ${m.text} | ${m.runs[0].entries} | ${round1(m.mb)} | ${of(m, "ms")} ms | ` +
      `< ${TARGET_MS} ms | ${of(m, "ms") < TARGET_MS ? "PASS" : "FAIL"} | ${date} | ` +
      `\`${command}\` |`
    ),
    "",
  ].join("\n");
}

async function main(args: string[]): Promise<void> {
  const v8Flags = args.find((arg) => arg.startsWith("--v8-flags="))?.slice("--v8-flags=".length);
  const runs = Number(args.find((arg) => !arg.startsWith("--")) ?? 7);
  const home = await Deno.makeTempDir({ prefix: "tern-session-bench-" });
  try {
    const results = await measureAll(home, runs, v8Flags);
    const text = markdown(results, new Date().toISOString().slice(0, 10), v8Flags);
    console.log(text);
    if (v8Flags) {
      console.log("Not written to bench/results: tern's launcher gives other V8 flags");
      return;
    }
    const out = join(ROOT, "bench/results/sessions.md");
    await Deno.writeTextFile(out, text);
    console.log(`Wrote ${relative(Deno.cwd(), out)}`);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

// `deno bench bench/` loads this file too (its name ends in _bench.ts): run only as a script.
if (import.meta.main) {
  const [mode, ...rest] = Deno.args;
  if (mode === "--resume") console.log(JSON.stringify(await timeResume(rest[0], rest[1])));
  else if (mode === "--write") {
    // Only writes the two sessions into an existing home (to time them some other way).
    console.log(JSON.stringify([writeSession(rest[0], false), writeSession(rest[0], true)]));
  } else if (mode === "--touch") console.log(JSON.stringify(touch(Number(rest[0]))));
  else await main(Deno.args);
}
