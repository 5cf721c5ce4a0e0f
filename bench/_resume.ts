/**
 * Whether resuming a session depends on the history before its last compaction (issue 21,
 * target 7): two sessions that end alike (a compaction, then the same `AFTER` entries) but
 * differ in what lies before the compaction (`SHORT` or `LONG` entries of messages and tool
 * output). Timed two ways, each in a fresh process: the session's opening alone
 * ({@linkcode timeResumeProcess}: `findSession`, `Session.open`, `state()`), and a whole
 * `tern run --resume <id>` to its first model request ({@linkcode timeResumeRun}), which also
 * times whatever the turn reads of the session before it asks the model. Flat means the long
 * one takes no longer than the short one, within noise.
 *
 * As a program: `deno run --allow-read --allow-write bench/_resume.ts <home> <id>` prints one resume's ms.
 */
import { join } from "node:path";
import { findSession } from "../src/session/paths.ts";
import { Session } from "../src/session/session.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { ROOT } from "../tests/support/tern_process.ts";

/** Entries before the compaction in the short and in the long session, and after it in both. */
export const SHORT = 100;
export const LONG = 6_000;
export const AFTER = 300;
/** Entries after the compaction in the sessions a whole run resumes: few enough that the run does not compact them again. */
export const AFTER_RUN = 30;
/** The workspace the sessions belong to, unless told another. */
const CWD = "/bench/project";
/** A tool output of about 2 KB. */
const OUTPUT = "const answer = compute(input); // a line of code of a file\n".repeat(36);

/**
 * Writes a session of `before` entries, a compaction, then `after` entries (default `AFTER`) for
 * workspace `cwd`; returns its id. Written through `Session`, as tern writes it (a compaction
 * gets its checkpoint there).
 */
export function writeCompactedSession(
  home: string,
  before: number,
  { cwd = CWD, after = AFTER }: { cwd?: string; after?: number } = {},
): string {
  const writer = Session.create(home, { cwd, ternVersion: "bench" });
  const ids: string[] = [];
  const add = (entry: Parameters<Session["append"]>[0]) => {
    ids.push(writer.append(entry).id);
  };
  const exchange = (n: number) => {
    const id = `call_${n}`;
    add({ type: "message", message: { role: "user", content: `Step ${n}: read the file` } });
    add({
      type: "message",
      message: {
        role: "assistant",
        content: "Reading it.",
        toolCalls: [{ id, name: "read", arguments: '{"path":"src/a.ts"}' }],
      },
    });
    add({
      type: "message",
      message: { role: "tool", toolCallId: id, name: "read", content: OUTPUT },
    });
  };
  add({ type: "model", model: "bench-model", provider: "scripted" });
  let n = 0;
  while (ids.length < before) exchange(n++);
  const summarised = [...ids];
  add({
    type: "compaction",
    summary: "The work so far: the files were read and the plan agreed.",
    firstKeptId: null,
    tokensBefore: before * 200,
    tokensAfter: 20,
    summarisedCount: summarised.length,
    fallback: false,
  });
  const end = ids.length + after;
  while (ids.length < end) exchange(n++);
  writer.close();
  return writer.header.id;
}

/** Milliseconds of one resume of session `id` in `home`, in a fresh `deno` process. */
export async function timeResumeProcess(home: string, id: string): Promise<number> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      new URL(import.meta.url).pathname,
      home,
      id,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`Cannot time the resume of ${id}: exit ${out.code}`);
  return Number(new TextDecoder().decode(out.stdout));
}

/** Where a whole run resumes: tern's home (`TERN_HOME` and `HOME`), the workspace, the environment. */
export interface ResumePlace {
  home: string;
  workspace: string;
  env: Record<string, string>;
}

/**
 * Milliseconds from the spawn of `bin/tern run --resume <id>` to its first model request (a
 * scripted server on 127.0.0.1 that answers at once); the run must end well.
 */
export async function timeResumeRun(place: ResumePlace, id: string): Promise<number> {
  const arrivals: number[] = [];
  const server = await startScriptedServer(() => ({ text: "done" }), {
    chunkDelayMs: 0,
    onRequest: () => arrivals.push(performance.now()),
  });
  try {
    const spawnedAt = performance.now();
    const out = await new Deno.Command(join(ROOT, "bin/tern"), {
      args: [
        ...["run", "--resume", id, "--base-url", server.baseUrl, "--model", "bench"],
        ...["--mode", "bypass", "--output", "json", "go on"],
      ],
      cwd: place.workspace,
      env: { ...place.env, HOME: place.home, TERN_HOME: place.home },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success || arrivals.length !== 1 || JSON.parse(text).text !== "done") {
      const why = new TextDecoder().decode(out.stderr);
      throw new Error(`Cannot time the resume of ${id}: exit ${out.code}, ${text}\n${why}`);
    }
    return arrivals[0] - spawnedAt;
  } finally {
    await server.close();
  }
}

/** The timed work, in this process. */
async function resumeOnce(home: string, id: string): Promise<number> {
  const start = performance.now();
  const session = await Session.open(await findSession(home, id, CWD));
  const state = session.state();
  const ms = performance.now() - start;
  session.close();
  if (state.compactions !== 1 || session.warnings.length > 0) {
    throw new Error(`Cannot time the resume of ${id}: it did not replay whole`);
  }
  return ms;
}

if (import.meta.main) {
  const [home, id] = Deno.args;
  console.log(String(await resumeOnce(home, id)));
}
