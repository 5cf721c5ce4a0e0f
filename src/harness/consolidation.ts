/**
 * Runs memory consolidation (src/context/consolidate.ts) for a conversation, off the turn's
 * path: `afterTurn()` decides and returns at once; the model call and the writes happen in
 * the background, and the session entry is appended only while no turn runs (never between a
 * turn's tool call and its result). In `defer` mode (`tern run`), nothing runs: a due
 * consolidation is marked `pending` in the session and in tern's home, and the next
 * interactive start in the workspace does it. Failures go to `log` (default: a line in
 * `<ternHome>/memory/consolidation.log`), never to the person as errors, and leave the session untouched.
 */
import { join } from "../core/path.ts";
import type { Provider } from "../llm/types.ts";
import type { Session } from "../session/session.ts";
import { ancestors } from "../session/tree.ts";
import type { SessionEntry } from "../session/types.ts";
import { projectFactsPath, userFactsPath } from "../memory/facts.ts";
import { lstatOrNull } from "../core/verified_open.ts";
import {
  askModel,
  asRecord,
  buildConsolidationRequest,
  consolidationDue,
  type ConsolidationRecord,
  lastPoint,
  messagesSince,
  parseConsolidation,
  type PathEntry,
  topicName,
  writeTopics,
} from "../context/consolidate.ts";
import { findTopicFiles, PROJECT_MEMORY_FILE, USER_MEMORY_FILE } from "../memory/memory_files.ts";
import type { TurnResult } from "../agent/loop.ts";

/** How a conversation consolidates: in the background, or left for the next start. */
export type ConsolidationMode = "background" | "defer";

/** What a consolidator needs from its conversation. */
export interface ConsolidatorOptions {
  mode: ConsolidationMode;
  workspace: string;
  ternHome: string;
  session: () => Session;
  provider: () => Provider;
  model: () => string;
  /** True while a turn runs: the entry waits for its end. */
  busy: () => boolean;
  /** Where failures go; default: {@linkcode consolidationLogPath}. */
  log?: (line: string) => void;
  /** Masks the keys tern knows of in what the model wrote, before it becomes a topic file. */
  mask?: (text: string) => string;
  /**
   * False while the model server is one a project's files chose (`Conversation.personal`): the
   * consolidations other runs left pending are not sent there (their transcripts went to the
   * person's own server), and stay for a later start. Default: true.
   */
  personal?: () => boolean;
}

/** The folder of pending consolidations left by `tern run`. */
export function pendingFolder(ternHome: string): string {
  return join(ternHome, "memory", "pending");
}

/** A finished consolidation whose entry is not appended yet. */
interface Waiting {
  session: Session;
  record: ConsolidationRecord;
}

/** Where consolidation failures are logged. */
export function consolidationLogPath(ternHome: string): string {
  return join(ternHome, "memory", "consolidation.log");
}

/** Decides after each turn and runs consolidations in the background (see the module notes). */
export class Consolidator {
  readonly #options: ConsolidatorOptions;
  #running: Promise<void> | undefined;
  #abort = new AbortController();
  /** Records finished while a turn ran, appended at its end. */
  #waiting: Waiting[] = [];
  #memoryStamp: string | undefined;
  #pendingChecked = false;

  constructor(options: ConsolidatorOptions) {
    this.#options = options;
  }

  /**
   * Called as a turn starts. The facts files are noted once, at the first turn, and again at
   * each turn's end: a fact saved since (a /save between turns, `tern memory save` from a
   * command) makes the next turn one that wrote memory.
   */
  beforeTurn(): void {
    this.#memoryStamp ??= this.#factsStamp();
  }

  /** Called as a turn ends; returns at once. The background work is `idle()`. */
  afterTurn(result: TurnResult): void {
    this.#flush();
    const stamp = this.#factsStamp();
    const wroteMemory = stamp !== this.#memoryStamp;
    this.#memoryStamp = stamp;
    if (this.#running !== undefined) return;
    const session = this.#options.session();
    const path = recentPath(session, session.leafId);
    const due = consolidationDue(path, {
      toolCalls: result.toolCalls,
      answered: result.exitReason === "COMPLETED",
      wroteMemory,
    });
    const upTo = session.leafId;
    const from = lastPoint(path).point;
    if (due && this.#options.mode === "defer") {
      this.#markPending(session, { status: "pending", from, upTo });
      return;
    }
    if (this.#options.mode !== "background") return;
    if (!due && this.#pendingChecked) return;
    this.#running = this.#background(due ? { session, from, upTo } : undefined).finally(() => {
      this.#running = undefined;
      this.#flush();
    });
  }

  /** Resolves when no consolidation runs (tests, and callers that choose to wait). */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Stops a running consolidation (nothing is written after) without waiting for it. */
  close(): void {
    this.#abort.abort();
    this.#flush();
  }

  async #background(
    own: { session: Session; from: string | null; upTo: string | null } | undefined,
  ): Promise<void> {
    if (own !== undefined) await this.#consolidate(own.session, own.from, own.upTo);
    if (!this.#pendingChecked) {
      this.#pendingChecked = true;
      await this.#runPending();
    }
  }

  async #consolidate(session: Session, from: string | null, upTo: string | null): Promise<void> {
    try {
      const messages = messagesSince(recentPath(session, upTo), from);
      const topics = findTopicFiles(this.#options.workspace).map((file) =>
        topicName(file.split("/").pop() ?? "") ?? ""
      ).filter((name) => name !== "");
      const request = buildConsolidationRequest(this.#options.model(), messages, topics);
      const text = await askModel(this.#options.provider(), request, this.#abort.signal);
      if (this.#abort.signal.aborted) return;
      // Topic files are the project's (they may be committed): never a key in them. Masked
      // once parsed: a JSON escape (`\u0052`) would hide a key from a mask of the raw reply.
      const found = parseConsolidation(text, { mask: this.#options.mask });
      const files = writeTopics(this.#options.workspace, found);
      this.#waiting.push({ session, record: { status: "done", from, upTo, files } });
    } catch (error) {
      this.#log(`memory consolidation failed: ${error instanceof Error ? error.message : error}`);
    }
  }

  /** Consolidations `tern run` left for this workspace, in sessions no process holds. */
  async #runPending(): Promise<void> {
    const folder = pendingFolder(this.#options.ternHome);
    let names: string[];
    try {
      names = [...Deno.readDirSync(folder)].filter((entry) => entry.isFile).map((e) => e.name);
    } catch {
      return;
    }
    for (const name of names) {
      if (this.#abort.signal.aborted) return;
      const marker = join(folder, name);
      let pointer: { session?: string; workspace?: string };
      try {
        pointer = JSON.parse(Deno.readTextFileSync(marker));
      } catch {
        continue;
      }
      if (pointer.workspace !== this.#options.workspace || typeof pointer.session !== "string") {
        continue;
      }
      if (pointer.session === this.#options.session().path) {
        await this.#pendingIn(this.#options.session(), marker);
        continue;
      }
      // Another run's transcript: never to a server a project's files chose (this session's own
      // went there already). The marker stays for a start with the person's own server.
      if (this.#options.personal?.() === false) {
        this.#log(
          "pending memory consolidation not run: this run's model server was chosen by the " +
            "project's files, and the pending session's conversation is not sent there",
        );
        continue;
      }
      const { Session } = await import("../session/session.ts");
      let session: Session;
      try {
        session = await Session.open(pointer.session);
      } catch (error) {
        // Busy (another tern has it) or gone: left for later, or dropped when gone.
        if (lstatOrNull(pointer.session) === null) Deno.removeSync(marker);
        this.#log(`pending memory consolidation not run: ${(error as Error).message}`);
        continue;
      }
      try {
        await this.#pendingIn(session, marker);
        this.#flush(session);
      } finally {
        session.close();
      }
    }
  }

  async #pendingIn(session: Session, marker: string): Promise<void> {
    const records = recentPath(session, session.leafId).map(asRecord)
      .filter((record) => record !== undefined);
    const pending = records.at(-1);
    if (pending?.status === "pending") {
      // From the last point whose work was done: several runs may have left pending ones.
      const from = records.findLast((record) => record.status === "done")?.upTo ?? null;
      const before = this.#waiting.length;
      await this.#consolidate(session, from, pending.upTo);
      if (this.#waiting.length === before) return; // failed: the marker stays
    }
    Deno.removeSync(marker);
  }

  #markPending(session: Session, record: ConsolidationRecord): void {
    try {
      session.append({ type: "consolidation", data: record });
      const folder = pendingFolder(this.#options.ternHome);
      Deno.mkdirSync(folder, { recursive: true });
      Deno.writeTextFileSync(
        join(folder, `${session.id}.json`),
        JSON.stringify({ session: session.path, workspace: this.#options.workspace }),
      );
    } catch (error) {
      this.#log(`memory consolidation not marked: ${(error as Error).message}`);
    }
  }

  /** Appends the finished records (to `only`'s session, or all) while no turn runs. */
  #flush(only?: Session): void {
    if (this.#options.busy() && only === undefined) return;
    const keep: Waiting[] = [];
    for (const item of this.#waiting) {
      if (only !== undefined && item.session !== only) {
        keep.push(item);
        continue;
      }
      try {
        item.session.append({ type: "consolidation", data: item.record });
      } catch (error) {
        this.#log(`memory consolidation not recorded: ${(error as Error).message}`);
      }
    }
    this.#waiting = keep;
  }

  #factsStamp(): string {
    const { ternHome, workspace } = this.#options;
    // The write tools cannot change .tern/ (a protected folder): of the memory files they
    // reach MEMORY.md only; the person's memory.md and the facts change by tern's commands.
    return [
      userFactsPath(ternHome),
      projectFactsPath(ternHome, workspace),
      join(workspace, PROJECT_MEMORY_FILE),
      join(ternHome, USER_MEMORY_FILE),
    ].map((path) => {
      const info = lstatOrNull(path);
      return `${info?.mtime?.getTime() ?? 0}:${info?.size ?? 0}`;
    }).join("|");
  }

  #log(line: string): void {
    if (this.#options.log) return this.#options.log(line);
    try {
      const path = consolidationLogPath(this.#options.ternHome);
      Deno.mkdirSync(join(path, ".."), { recursive: true });
      Deno.writeTextFileSync(path, `${new Date().toISOString()} ${line}\n`, { append: true });
    } catch {
      // A log that cannot be written is not worth telling the person about either.
    }
  }
}

/**
 * The entries on the path to `id` back to the last done consolidation's point, or to the last
 * compaction (what it summarised is not counted again), read backwards through `get()`: a
 * session resumed from its end (src/session/tail.ts) is not read whole for it.
 */
export function recentPath(session: Session, id: string | null): PathEntry[] {
  const path: SessionEntry[] = [];
  let stopAt: string | null | undefined;
  for (const entry of ancestors((at) => session.get(at), id)) {
    path.push(entry);
    if (entry.type === "compaction" || entry.id === stopAt) break;
    const record = asRecord(entry as PathEntry);
    if (record?.status === "done" && stopAt === undefined) {
      if (record.upTo === null) break;
      stopAt = record.upTo;
    }
  }
  return path.reverse() as PathEntry[];
}

/** The consolidation records of `entries` with their entry ids, oldest first. */
export function consolidations(
  entries: readonly SessionEntry[],
): Array<{ id: string; timestamp: string; record: ConsolidationRecord }> {
  return entries.flatMap((entry) => {
    const record = asRecord(entry as PathEntry);
    return record ? [{ id: entry.id, timestamp: entry.timestamp, record }] : [];
  });
}
