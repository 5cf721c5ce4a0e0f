/**
 * The session file format: one JSON object per line (ASCII only: other characters are written
 * as `\uXXXX` escapes), never rewritten. The first line is the
 * header; every later line is an entry, a node of a tree linked by `parentId`. The leaf (the
 * current position) is always the last entry in the file: continuing from an older entry
 * appends a `branch` entry under it, so moving the leaf never touches old lines.
 */
import type { Message, Usage } from "../core/messages.ts";

/** Bumped when a reader of an older version could misread a newer file. */
export const SESSION_FORMAT_VERSION = 1;

/** The first line of every session file. */
export interface SessionHeader {
  type: "session";
  version: number;
  /** The session id (a UUID); file names end in `_<id>.jsonl`. */
  id: string;
  /** The workspace the session ran in (absolute real path). */
  cwd: string;
  /** ISO time of creation. */
  created: string;
  ternVersion: string;
  /** Set when the session was forked from another: where it came from. */
  parent?: { id: string; path: string; leafId: string | null };
  /** Set on a subagent's session: the parent session that spawned it and the run. */
  subagentOf?: SubagentLink;
  /**
   * Set when the session began with a model server a project's files chose: which file
   * (`project:<path>` or `dotenv:<path>`). Absent: the person's own server. Its conversation may
   * go on only with a server of the same choice, or one the person gives (see
   * src/harness/run_session.ts checkSessionServer).
   */
  serverChosenBy?: string;
}

/** A child session's link to the parent session that spawned it (`spawn_agent`). */
export interface SubagentLink {
  sessionId: string;
  path: string;
  agentId: string;
  runId: string;
  taskName: string;
}

/** What every entry has. `parentId` is null for the first entry of the tree. */
export interface EntryBase {
  /** 8 hex characters, unique within the session. */
  id: string;
  parentId: string | null;
  /** ISO time the entry was written. */
  timestamp: string;
}

/** A change to what the session may do beyond its profile, in the order it happened. */
export type PermissionChange =
  /** "Allow for the session" on an approval key (a command prefix or a tool call). */
  | { kind: "approval"; key: string }
  /** A request_permissions grant with session scope. */
  | {
    kind: "grant";
    extra: { read: string[]; write: string[]; net: string[]; env: string[] };
    keys: string[];
    withoutSandbox: boolean;
  };

export type MessageEntry = EntryBase & {
  type: "message";
  message: Message;
  /** For assistant messages: the usage of the model call that produced it. */
  usage?: Usage;
  /** For assistant messages: who answered (`provider`, `model`) and the cost in USD if known. */
  provider?: string;
  model?: string;
  cost?: number;
  /** For assistant messages: USD the prompt cache saved on the call, when prices are known. */
  saved?: number;
  /**
   * The subagent completions (run ids) this message delivered to the model: a `wait_agent`
   * result or an injected agent message. Written in the same line as the message, so a
   * completion is consumed exactly when the model's transcript holds it.
   */
  mailbox?: string[];
};

/**
 * The model changed. `cause: "fallback"` records the router moving down the fallback chain
 * (with the failure as `reason`): that is history, not a choice, so replay does not restore it.
 */
export type ModelEntry = EntryBase & {
  type: "model";
  model: string;
  provider?: string;
  cause?: "fallback";
  reason?: string;
};
export type ThinkingEntry = EntryBase & { type: "thinking"; level: string };
export type ModeEntry = EntryBase & { type: "mode"; mode: string };
export type ProfileEntry = EntryBase & { type: "profile"; profile: string };
export type PermissionEntry = EntryBase & { type: "permission"; change: PermissionChange };

/**
 * The context before `firstKeptId` (on this entry's path) was replaced by `summary`.
 * Replay: summary, then the path's messages from `firstKeptId` on, then what follows this
 * entry. `firstKeptId` null means nothing before this entry was kept.
 */
export type CompactionEntry = EntryBase & {
  type: "compaction";
  summary: string;
  firstKeptId: string | null;
  tokensBefore: number;
  tokensAfter: number;
  /** How many entries the summary replaced (absent in entries written before it existed). */
  summarisedCount?: number;
  /**
   * Ids of the entries whose content the summary replaced: written before `summarisedCount`,
   * no longer. The list grew with the history before the compaction, and resuming parses the
   * compaction's line; the ids are the path's entries before `firstKeptId` anyway.
   */
  summarised?: string[];
  /** True when the model summary failed and the deterministic fallback was used. */
  fallback: boolean;
  /** What the person asked the summary to focus on (`/compact <focus>`). */
  focus?: string;
  /**
   * The replayed settings of the path up to this entry (written by `Session` since format
   * version 1 without a bump: older readers ignore it). Replay takes them from here, so resuming
   * needs only the entries from `firstKeptId` on (`src/session/tail.ts`).
   */
  checkpoint?: Checkpoint;
  /**
   * Whether a `subagent` entry (on any branch) lies before this line in the file (written by
   * `Session` since format version 1 without a bump; absent in older files). A session resumed
   * from this compaction on learns from it that the lines it did not read hold no subagent
   * records, so its first turn need not read them to look for some.
   */
  subagentsBefore?: boolean;
};

/** What replay carries across a compaction besides the messages (see `ReplayState`). */
export interface Checkpoint {
  model?: string;
  provider?: string;
  thinking?: string;
  mode?: string;
  profile?: string;
  /** Session-wide approvals and grants, in the order they were given. */
  permissions: PermissionChange[];
  /** Model usage summed over the path (including what compactions summarised away). */
  usage: Usage;
  /** Cost in USD summed over the path's priced calls; absent when none had a price. */
  cost?: number;
  /** USD the prompt cache saved, summed over the path's priced calls; absent when none had one. */
  saved?: number;
  /** Fallback switches on the path, in order (`provider/model`). */
  fallbacks: string[];
  /** Compactions on the path. */
  compactions: number;
  /** Pinned instructions (`/pin`): in every request after the system prompt; absent when none. */
  pins?: string[];
  /**
   * The data of the `plan` entries on the path from the newest one that starts a plan (data with
   * `kind: "plan"`, src/plan/record.ts) on, in order, of a node's records only the newest;
   * absent when no plan started on the path this replay read. A resumed plan is rebuilt from it
   * without reading before a compaction.
   */
  plan?: unknown[];
}

/**
 * The leaf moved: this entry's parent is the new position, `fromId` the old leaf. `summary`
 * (optional) records what was left behind on the old branch; replay shows it to the model.
 */
export type BranchEntry = EntryBase & {
  type: "branch";
  fromId: string | null;
  summary?: string;
};

export type LabelEntry = EntryBase & { type: "label"; targetId: string; label: string };
/**
 * The pinned instructions from here on (`/pin`), the whole list: each change writes it again.
 * They survive every compaction (the checkpoint carries them).
 */
export type PinsEntry = EntryBase & { type: "pins"; pins: string[] };
/** Reserved for the plan-and-execute state. */
export type PlanEntry = EntryBase & { type: "plan"; data: unknown };
/**
 * A background consolidation of memory (src/context/consolidate.ts: `ConsolidationRecord`):
 * its point in the transcript, the topic files it wrote, or an undo. Not context.
 */
export type ConsolidationEntry = EntryBase & { type: "consolidation"; data: unknown };
/**
 * A subagent's life in the parent session (src/harness/subagents/mailbox.ts: `SubagentRecord`): its
 * spawn (the child session it writes) and its completion in the mailbox. Not context.
 */
export type SubagentEntry = EntryBase & { type: "subagent"; data: unknown };

/**
 * An entry whose type this version does not know (written by a newer tern). It stays in the
 * tree (its children remain reachable) and replay ignores it; `raw` is the line as parsed.
 */
export type UnknownEntry = EntryBase & { type: "unknown"; raw: Record<string, unknown> };

export type SessionEntry =
  | MessageEntry
  | ModelEntry
  | ThinkingEntry
  | ModeEntry
  | ProfileEntry
  | PermissionEntry
  | CompactionEntry
  | BranchEntry
  | LabelEntry
  | PinsEntry
  | PlanEntry
  | SubagentEntry
  | ConsolidationEntry
  | UnknownEntry;

/** The entry types this version writes and reads. */
export const KNOWN_ENTRY_TYPES: ReadonlySet<string> = new Set([
  "message",
  "model",
  "thinking",
  "mode",
  "profile",
  "permission",
  "compaction",
  "branch",
  "label",
  "pins",
  "plan",
  "subagent",
  "consolidation",
]);

/** An entry as written: everything but the fields the store fills in. */
export type NewEntry = SessionEntry extends infer E
  ? E extends SessionEntry ? Omit<E, "id" | "parentId" | "timestamp"> : never
  : never;

/** How many entries compaction `entry` summarised, in the format of any version. */
export function summarisedCount(entry: CompactionEntry): number {
  // Read from a file, the fields are what the file says: only a number or a list counts.
  if (typeof entry.summarisedCount === "number") return entry.summarisedCount;
  return Array.isArray(entry.summarised) ? entry.summarised.length : 0;
}
