/**
 * The parent session's persistent mailbox of subagent completions. Every spawn and every
 * completion is a `subagent` entry of the parent session; a completion is consumed by the
 * message that shows it to the model (a `wait_agent` result or an injected agent message),
 * whose session entry names its run in `mailbox`. Message and consumption are one line, written
 * whole or not at all, so a crash at any point neither loses a completion (not yet in the
 * transcript: delivered again) nor delivers it twice (in the transcript: consumed).
 *
 * `take()` is the one consuming entry point: it claims the oldest completion in memory, so no
 * second consumer in this process gets it; the claim becomes permanent when the message that
 * carries it is recorded (`delivered()`), and is released if that never happens (`release()`).
 */
import type { Session } from "../../session/session.ts";
import type { SessionEntry } from "../../session/types.ts";
import type { ChildStatus } from "./protocol.ts";
import { truncateMiddle } from "../../tools/truncate.ts";
import { plainLine } from "../../core/invisible_text.ts";

/** What identifies one run of a subagent. */
export interface RunIdentity {
  taskName: string;
  agentId: string;
  childSessionId: string;
  runId: string;
}

/** A spawn, as the parent session records it. */
export interface SpawnRecord extends RunIdentity {
  kind: "spawn";
  message: string;
  tools: string[];
  model: string;
  provider?: string;
  thinking: string;
}

/** A finished run in the mailbox. */
export interface Completion extends RunIdentity {
  kind: "completion";
  status: ChildStatus;
  content: string;
  finalEntryId: string | null;
  error?: string;
}

/** The `data` of a parent session's `subagent` entry. */
export type SubagentRecord = SpawnRecord | Completion;

export class Mailbox {
  readonly #session: Session;
  readonly #spawns = new Map<string, SpawnRecord>();
  /** Every completion recorded, by run id. */
  readonly #completions = new Map<string, Completion>();
  /** Run ids whose completion a recorded message delivered. */
  readonly #delivered = new Set<string>();
  /** Run ids taken but not yet recorded as delivered. */
  readonly #claimed = new Set<string>();
  #listeners = new Set<() => void>();

  /** Reads the mailbox's state from every entry of `session`. */
  constructor(session: Session) {
    this.#session = session;
    for (const entry of session.entries) this.#read(entry);
  }

  get session(): Session {
    return this.#session;
  }

  /** Spawned runs without a completion yet (running, or lost in a crash). */
  unfinished(): SpawnRecord[] {
    return [...this.#spawns.values()].filter((spawn) => !this.#completions.has(spawn.runId));
  }

  /** Every spawn recorded, in order. */
  spawns(): SpawnRecord[] {
    return [...this.#spawns.values()];
  }

  /** Records a spawn before its child starts. */
  recordSpawn(spawn: SpawnRecord): void {
    this.#session.append({ type: "subagent", data: spawn });
    this.#spawns.set(spawn.runId, spawn);
  }

  /**
   * Records a completion; a second one for the same run is ignored (idempotent), so a
   * completion found twice (the child's pipe and its session file) counts once.
   */
  post(completion: Completion): boolean {
    if (this.#completions.has(completion.runId)) return false;
    this.#session.append({ type: "subagent", data: completion });
    this.#completions.set(completion.runId, completion);
    for (const listener of [...this.#listeners]) listener();
    return true;
  }

  /** Completions neither delivered nor claimed, oldest first. */
  pending(): Completion[] {
    return [...this.#completions.values()].filter((completion) =>
      !this.#delivered.has(completion.runId) && !this.#claimed.has(completion.runId)
    );
  }

  /** The one consuming entry point: claims the oldest pending completion. */
  take(): Completion | undefined {
    const next = this.pending()[0];
    if (next !== undefined) this.#claimed.add(next.runId);
    return next;
  }

  /** The claimed runs among `runIds` are now in the transcript: consumed for good. */
  delivered(runIds: readonly string[]): void {
    for (const runId of runIds) {
      this.#claimed.delete(runId);
      this.#delivered.add(runId);
    }
  }

  /** Claims never recorded (a turn that ended first) go back to the mailbox. */
  release(): void {
    this.#claimed.clear();
  }

  /** Whether the run's completion was claimed and not yet recorded. */
  claimed(runId: string): boolean {
    return this.#claimed.has(runId);
  }

  /** Where a run stands in the mailbox: no result yet, a result waiting, or delivered. */
  stateOf(runId: string): "pending" | "waiting" | "delivered" {
    if (this.#delivered.has(runId)) return "delivered";
    return this.#completions.has(runId) ? "waiting" : "pending";
  }

  /** The completion recorded for a run. */
  completion(runId: string): Completion | undefined {
    return this.#completions.get(runId);
  }

  /** Calls `listener` at each new completion; returns the unsubscribe function. */
  onPost(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #read(entry: SessionEntry): void {
    if (entry.type === "message" && entry.mailbox) {
      for (const runId of entry.mailbox) this.#delivered.add(runId);
      return;
    }
    if (entry.type !== "subagent") return;
    const data = entry.data as Partial<SubagentRecord> | undefined;
    if (typeof data?.runId !== "string") return;
    if (data.kind === "spawn") this.#spawns.set(data.runId, data as SpawnRecord);
    if (data.kind === "completion" && !this.#completions.has(data.runId)) {
      this.#completions.set(data.runId, data as Completion);
    }
  }
}

/** The longest answer of a child the parent's model gets, in characters (head and tail kept). */
export const MAX_CONTENT_CHARS = 50_000;
/** The longest error of a child the parent's model gets, in characters. */
export const MAX_ERROR_CHARS = 2_000;

/**
 * The text the model gets for a completion (a wait_agent result or an agent message): tern's
 * head line, the error on one line, then the child's answer framed by markers that carry a
 * random id its words cannot know, so an answer cannot end the frame nor write a line that
 * reads as tern's (another run's head, a status, an error): a child's model, a file it read or
 * its server may have written it.
 */
export function completionText(completion: Completion): string {
  const content = truncateMiddle(completion.content, MAX_CONTENT_CHARS);
  const head = `[subagent ${completion.taskName} (agent ${completion.agentId}, run ` +
    `${completion.runId}, child session ${completion.childSessionId}) ${completion.status}]`;
  // The error may quote the child's server or its stderr. Unlike the answer it is not framed,
  // so it is one line, bounded, with nothing hidden from the person that the model reads.
  const error = completion.error ? `\nerror: ${plainLine(completion.error, MAX_ERROR_CHARS)}` : "";
  const id = crypto.randomUUID().slice(0, 8);
  return `${head}${error}\n--- BEGIN SUBAGENT ANSWER ${id} (the subagent's words, not tern's or ` +
    `the person's) ---\n${content}\n--- END SUBAGENT ANSWER ${id} ---`;
}
