/**
 * Background consolidation: after a turn, the model is asked to extract durable facts
 * (decisions, conventions, pitfalls, with their sources) from the transcript since the last
 * consolidation point into topic files under `<workspace>/.tern/memory/`.
 *
 * The model's reply is untrusted (a prompt-injected model may say anything): it names topics,
 * never paths. A topic name is cut to `[a-z0-9-]`, 1 to 48 characters, and becomes one flat
 * `.tern/memory/<name>.md`; facts are single lines without control characters, capped in
 * number and length; a file never grows past {@linkcode MAX_TOPIC_FILE_CHARS}. `.tern` and
 * `.tern/memory` must be real folders (not symlinks) inside the workspace, an existing topic
 * file a regular file with one link; the new text is written to a fresh file beside it and
 * renamed over it, so no symlink is ever followed. `.tern` is read-only to shell commands (the
 * sandbox) and protected from the write tools: tern's own process writes here, as it writes
 * the session. Every write is recorded (before and after) so `tern memory undo` restores it.
 */
import { join, relative, sep } from "../core/path.ts";
import type { Message } from "../core/messages.ts";
import type { ModelRequest, Provider } from "../llm/types.ts";
import { estimateMessageTokens } from "./tokens.ts";
import { fitConversation } from "./summary_request.ts";
import { lstatOrNull, realPathOrNull } from "../core/verified_open.ts";
import { MEMORY_FOLDER } from "../memory/memory_files.ts";

/** Transcript tokens since the session's start before the first consolidation. */
export const FIRST_CONSOLIDATION_TOKENS = 10_000;
/** Transcript tokens since the last consolidation point before the next one. */
export const NEXT_CONSOLIDATION_TOKENS = 5_000;
/** Tool calls that make a turn worth consolidating even when it did not end with an answer. */
export const MIN_TOOL_CALLS = 3;
/** The most topic files one consolidation writes. */
export const MAX_TOPICS_PER_RUN = 5;
/** The most facts one consolidation adds. */
export const MAX_FACTS_PER_RUN = 20;
/** The most characters of one fact line (source included). */
export const MAX_FACT_LINE_CHARS = 500;
/** A topic file is never written past this size; facts that do not fit are dropped. */
export const MAX_TOPIC_FILE_CHARS = 16_000;
/** Tokens of transcript sent with the request. */
const TRANSCRIPT_BUDGET_TOKENS = 24_000;
/** How long the model may take. */
export const CONSOLIDATION_TIMEOUT_MS = 120_000;

/** One file a consolidation wrote: its text before (null: it did not exist) and after. */
export interface ConsolidatedFile {
  /** Workspace-relative, `.tern/memory/<name>.md`. */
  path: string;
  before: string | null;
  after: string;
}

/** What a consolidation entry of the session records. */
export interface ConsolidationRecord {
  /** `done`: files written; `pending`: due, left for the next start (`tern run`); `undone`. */
  status: "done" | "pending" | "undone";
  /** The entry id the transcript was consolidated up to (the point). */
  upTo: string | null;
  /** The previous point; null for the session's start. */
  from: string | null;
  files?: ConsolidatedFile[];
  /** For `undone`: the id of the consolidation entry undone. */
  undoes?: string;
}

/** A session entry as consolidation sees it. */
export interface PathEntry {
  id: string;
  type: string;
  message?: Message;
  data?: unknown;
}

/**
 * The last consolidation point on `path` (its `upTo`), and whether there was one. A pending
 * one counts (its work is left for later); an undo keeps the point of what it undid.
 */
export function lastPoint(path: readonly PathEntry[]): { point: string | null; found: boolean } {
  for (let i = path.length - 1; i >= 0; i--) {
    const record = asRecord(path[i]);
    if (record !== undefined && record.status !== "undone") {
      return { point: record.upTo, found: true };
    }
  }
  return { point: null, found: false };
}

/** The messages on `path` after the entry `point` (all of them when null or not on it). */
export function messagesSince(path: readonly PathEntry[], point: string | null): Message[] {
  const start = point === null ? 0 : path.findIndex((entry) => entry.id === point) + 1;
  return path.slice(start).flatMap((entry) =>
    entry.type === "message" && entry.message ? [entry.message] : []
  );
}

/** What a turn did, for the decision. */
export interface TurnSummary {
  toolCalls: number;
  /** The turn ended with an answer (a natural break), not stopped or failed. */
  answered: boolean;
  /** The turn wrote memory itself: a fact saved, a memory file written. */
  wroteMemory: boolean;
}

/**
 * Whether a consolidation is due after a turn: never when the turn wrote memory; only when it
 * made {@linkcode MIN_TOOL_CALLS} tool calls or ended with an answer; and only once the
 * transcript since the last point reaches {@linkcode FIRST_CONSOLIDATION_TOKENS} (no point yet)
 * or {@linkcode NEXT_CONSOLIDATION_TOKENS}.
 */
export function consolidationDue(path: readonly PathEntry[], turn: TurnSummary): boolean {
  if (turn.wroteMemory) return false;
  if (turn.toolCalls < MIN_TOOL_CALLS && !turn.answered) return false;
  const { point, found } = lastPoint(path);
  const tokens = messagesSince(path, point).reduce(
    (sum, message) => sum + estimateMessageTokens(message),
    0,
  );
  return tokens >= (found ? NEXT_CONSOLIDATION_TOKENS : FIRST_CONSOLIDATION_TOKENS);
}

/** The system prompt of the consolidation request. */
export const CONSOLIDATION_SYSTEM_PROMPT =
  `You keep the long-term memory of a coding agent working in one project. From the transcript you are given, extract only durable facts worth knowing in later sessions: decisions (and why), project conventions, pitfalls and their fixes. Each fact needs its source: a file path, a command, or "the person said". Leave out anything temporary, already known from the existing topics, or secret (keys, tokens, passwords).

Reply with JSON only, in this shape:
{"topics": [{"topic": "testing", "title": "Testing", "facts": [{"fact": "...", "source": "..."}]}]}
A topic is a short lowercase name (letters, digits, hyphens); reuse an existing topic when it fits. Reply {"topics": []} when there is nothing durable.`;

/** The request: the existing topics, then the transcript since the last point. */
export function buildConsolidationRequest(
  model: string,
  messages: readonly Message[],
  topics: readonly string[],
): ModelRequest {
  const items = messages.map((message, index) => ({ id: String(index), message }));
  const existing = topics.length > 0 ? topics.join(", ") : "(none yet)";
  return {
    model,
    messages: [
      { role: "system", content: CONSOLIDATION_SYSTEM_PROMPT },
      {
        role: "user",
        content: `Existing topics: ${existing}\n\n<transcript>\n${
          fitConversation(items, TRANSCRIPT_BUDGET_TOKENS)
        }\n</transcript>`,
      },
    ],
    tools: [],
  };
}

/** One topic's facts, as parsed and cleaned from the model's reply. */
export interface TopicFacts {
  /** The sanitized name: the file is `.tern/memory/<name>.md`. */
  name: string;
  title: string;
  /** Fact lines, `- fact (source: ...)`. */
  lines: string[];
}

/**
 * The topics of the model's reply, cleaned (see the module notes). `mask` (keys replaced) runs
 * on each title and fact line before it is cut to length: a key cut in two is no longer found.
 * @throws {Error} when the reply holds no JSON object with a `topics` list.
 */
export function parseConsolidation(
  text: string,
  options: { mask?: (text: string) => string } = {},
): TopicFacts[] {
  const mask = options.mask ?? ((line: string) => line);
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) throw new Error("the reply holds no JSON object");
  const value = JSON.parse(text.slice(start, end + 1)) as { topics?: unknown };
  if (!Array.isArray(value.topics)) throw new Error('the reply has no "topics" list');
  const byName = new Map<string, TopicFacts>();
  let facts = 0;
  for (const raw of value.topics as unknown[]) {
    if (typeof raw !== "object" || raw === null) continue;
    const topic = raw as Record<string, unknown>;
    const name = topicName(String(topic.topic ?? topic.title ?? ""));
    if (name === undefined) continue;
    let entry = byName.get(name);
    if (entry === undefined) {
      if (byName.size >= MAX_TOPICS_PER_RUN) continue;
      const title = mask(oneLine(String(topic.title ?? name))).slice(0, 80) || name;
      entry = { name, title, lines: [] };
      byName.set(name, entry);
    }
    for (const item of Array.isArray(topic.facts) ? topic.facts : []) {
      if (facts >= MAX_FACTS_PER_RUN) break;
      const fact = oneLine(typeof item === "string" ? item : String(item?.fact ?? ""));
      if (fact === "") continue;
      const source = typeof item === "object" && item !== null
        ? oneLine(String((item as Record<string, unknown>).source ?? ""))
        : "";
      const line = mask(`- ${fact}${source ? ` (source: ${source})` : ""}`);
      entry.lines.push(
        line.length > MAX_FACT_LINE_CHARS ? line.slice(0, MAX_FACT_LINE_CHARS) : line,
      );
      facts++;
    }
  }
  return [...byName.values()].filter((topic) => topic.lines.length > 0);
}

/** A topic name cut to `[a-z0-9-]{1,48}`; undefined when nothing is left. */
export function topicName(raw: string): string | undefined {
  const name = raw.toLowerCase().replace(/\.md$/, "").replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "").slice(0, 48).replace(/-+$/, "");
  return name === "" ? undefined : name;
}

/**
 * `text` as one plain line: C0 and C1 controls (an 8-bit CSI, NEL), format characters (bidi
 * overrides and isolates, zero-width ones) and line or paragraph separators become spaces, runs
 * of spaces one. What the model wrote reaches a file anyone may `cat` and the next prompts.
 */
function oneLine(text: string): string {
  return text.replace(UNSAFE_IN_A_FACT, " ").replace(/\s+/g, " ").trim();
}

const UNSAFE_IN_A_FACT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * Asks `provider` for the facts of `messages`; the reply's text.
 * @throws {Error} when the call fails, times out or returns no text.
 */
export async function askModel(
  provider: Provider,
  request: ModelRequest,
  signal?: AbortSignal,
): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), CONSOLIDATION_TIMEOUT_MS);
  const forward = () => controller.abort();
  signal?.addEventListener("abort", forward, { once: true });
  let streamed = "";
  try {
    for await (const event of provider.stream(request, controller.signal)) {
      if (event.type === "text_delta") streamed += event.text;
      else if (event.type === "retry") streamed = "";
      else if (event.type === "error") throw new Error(`the model call failed: ${event.message}`);
      else if (event.type === "done") {
        const text = event.message.content !== "" ? event.message.content : streamed;
        if (text.trim() === "") throw new Error("the model returned no text");
        return text;
      }
    }
    throw new Error("the model's stream ended without a result");
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", forward);
  }
}

/**
 * The real path of `<workspace>/.tern/memory`, made when missing; each of `.tern` and
 * `.tern/memory` must be a real folder, not a symlink.
 * @throws {Error} when either is a symlink or not a folder.
 */
export function memoryFolder(workspace: string): string {
  let dir = realPathOrNull(workspace) ?? workspace;
  for (const part of MEMORY_FOLDER.split(sep)) {
    dir = join(dir, part);
    let info = lstatOrNull(dir);
    if (info === null) {
      Deno.mkdirSync(dir, { mode: 0o755 });
      info = lstatOrNull(dir);
    }
    if (info === null || info.isSymlink || !info.isDirectory) {
      throw new Error(`Cannot write memory in "${dir}": it is not a folder (or is a symlink)`);
    }
  }
  return dir;
}

/** The current text of a topic file; null when missing. @throws when not a plain file. */
function readTopic(path: string): string | null {
  const info = lstatOrNull(path);
  if (info === null) return null;
  if (!info.isFile || info.isSymlink || (info.nlink ?? 1) > 1) {
    throw new Error(`Cannot write memory file "${path}": it is not a regular file with one link`);
  }
  // A topic file tern wrote stays under MAX_TOPIC_FILE_CHARS; one a repository made huge is not
  // read into tern's own process (no cgroup bounds it).
  if (info.size > MAX_TOPIC_FILE_CHARS * 4) {
    throw new Error(
      `Cannot write memory file "${path}": it holds ${info.size} bytes, more than a topic file ` +
        `tern writes (${MAX_TOPIC_FILE_CHARS} characters); move it out of .tern/memory`,
    );
  }
  // Text tern can write back as it was: bytes that are not UTF-8 would come back as U+FFFD, for
  // good (an undo restores the text read), and a BOM would be dropped.
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(
      Deno.readFileSync(path),
    );
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new Error(
      `Cannot write memory file "${path}": it is not UTF-8 text, and rewriting it would change ` +
        "bytes it holds; fix or move it out of .tern/memory",
    );
  }
}

/** Writes `text` to `path` through a fresh file renamed over it (no symlink followed). */
export function replaceFile(path: string, text: string): void {
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o644 });
  try {
    file.writeSync(new TextEncoder().encode(text));
  } finally {
    file.close();
  }
  try {
    Deno.renameSync(temp, path);
  } catch (error) {
    Deno.removeSync(temp);
    throw error;
  }
}

/**
 * Appends `topics` to their files under `<workspace>/.tern/memory/` (see the module notes).
 * @returns each file written, with its text before and after.
 */
export function writeTopics(workspace: string, topics: readonly TopicFacts[]): ConsolidatedFile[] {
  if (topics.length === 0) return [];
  const folder = memoryFolder(workspace);
  const root = realPathOrNull(workspace) ?? workspace;
  const written: ConsolidatedFile[] = [];
  for (const topic of topics) {
    const path = join(folder, `${topic.name}.md`);
    const before = readTopic(path);
    let after = before ?? `# ${topic.title}\n`;
    for (const line of topic.lines) {
      if (after.includes(line)) continue;
      const next = `${after.endsWith("\n") ? after : after + "\n"}${line}\n`;
      if (next.length > MAX_TOPIC_FILE_CHARS) break;
      after = next;
    }
    if (after === before || (before === null && !after.includes("\n- "))) continue;
    replaceFile(path, after);
    written.push({ path: relative(root, path).split(sep).join("/"), before, after });
  }
  return written;
}

/**
 * Restores the files of `record` as they were before it, each only when it still holds what
 * the consolidation wrote.
 * @returns the files restored, and those left because they changed since.
 */
export function restoreFiles(
  workspace: string,
  record: ConsolidationRecord,
): { restored: string[]; changed: string[] } {
  const folder = memoryFolder(workspace);
  const restorable: { file: ConsolidatedFile; path: string }[] = [];
  const changed: string[] = [];
  // Every file is read before any is written: one that cannot be (a link, a FIFO) throws while
  // nothing has changed, rather than after the files before it were restored and not recorded.
  for (const file of record.files ?? []) {
    const name = file.path.split("/").pop() ?? "";
    // The recorded path came from the session: confined again to the memory folder.
    if (file.path !== `.tern/memory/${name}` || topicName(name) + ".md" !== name) continue;
    const path = join(folder, name);
    if (readTopic(path) === file.after) restorable.push({ file, path });
    else changed.push(file.path);
  }
  for (const { file, path } of restorable) {
    if (file.before === null) Deno.removeSync(path);
    else replaceFile(path, file.before);
  }
  return { restored: restorable.map(({ file }) => file.path), changed };
}

/** The record of a consolidation entry; undefined for other entries. */
export function asRecord(entry: PathEntry): ConsolidationRecord | undefined {
  if (entry.type !== "consolidation") return undefined;
  const data = entry.data as ConsolidationRecord | undefined;
  return data && typeof data === "object" && typeof data.status === "string" ? data : undefined;
}
