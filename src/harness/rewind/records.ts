/**
 * The checkpoint log of a session: `<session>.rewind` beside the session file, one JSON object
 * per line, only ever appended (not named `.jsonl`: only session files are). Its order is the
 * order things happened to the files, which is one timeline whatever branch the conversation is
 * on. A tern that does not know a kind of line skips it, so new kinds keep old tern working.
 */
import { join } from "../../core/path.ts";
import { openRegularFile, openRegularFileSync } from "../../session/regular_file.ts";
import type { Snapshot, TreeChange } from "./shadow_store.ts";

/** How a path changed during a turn, and by whom. */
export interface FileChange {
  path: string;
  status: TreeChange["status"];
  /** "tool": a file tool declared it wrote the path; "command": anything else (shell commands). */
  by: "tool" | "command";
}

/** Taken before a turn's first call that may change files. */
export interface BeforeRecord extends Snapshot {
  kind: "before";
  /** The user message entry that started the turn. */
  entryId: string;
  /** ISO time. */
  time: string;
}

/** Taken when that turn ended. Absent after a crash. */
export interface AfterRecord extends Snapshot {
  kind: "after";
  entryId: string;
  time: string;
  changes: FileChange[];
}

/** A rewind: the workspace before it (to undo it) and after it. */
export interface RewindRecord {
  kind: "rewind";
  /** Its {@linkcode RewindStartRecord}'s; absent when it restored no files, and in older logs. */
  id?: string;
  /** The user message entry rewound to. */
  entryId: string;
  time: string;
  /** The workspace just before the rewind; undefined when files were not restored. */
  before?: Snapshot;
  /** The workspace just after it. */
  after?: Snapshot;
  /** The leaf before the rewind moved it (undefined when the conversation stayed). */
  fromLeaf?: string | null;
  /** Paths kept as the person had them (conflicts they chose to keep). */
  kept: string[];
}

/**
 * Written just before a rewind starts changing files: what it sets out to do. The rewind's own
 * record (the same `id`) follows when it ended; without one it was stopped partway (tern was
 * killed), and each path it was to change is as it was in `before` or as in `to`.
 */
export interface RewindStartRecord {
  kind: "rewind-start";
  id: string;
  /** The user message entry rewound to, or "undo". */
  entryId: string;
  time: string;
  /** What the rewind restores ("files" or "both": one that moves only the leaf has no start). */
  scope: "files" | "both";
  /** The workspace just before it. */
  before: Snapshot;
  /** The tree the files are restored from (a checkpoint's, or for an undo the rewind's before). */
  to: string;
  /** How many paths it changes. */
  changes: number;
  /** Files changed outside tern that it overwrites or keeps; absent when there were none. */
  conflicts?: "keep" | "overwrite";
}

/**
 * Checkpoints stopped in this session's process (a snapshot or the log failed; the rest of the
 * process takes none): what changed the files from here until the next checkpoint (a later
 * process's) is not known to be tern's, so a rewind across it counts every such file as changed
 * outside tern. Without it, a model that made a checkpoint fail (more files than the limit) would
 * have the person's own later edits taken for the turn's and overwritten without a question.
 */
export interface FailedRecord {
  kind: "failed";
  /** The turn's user message entry; "" when no turn was running. */
  entryId: string;
  time: string;
  /** Why, as the person was told. */
  reason: string;
}

export type CheckpointRecord =
  | BeforeRecord
  | AfterRecord
  | RewindStartRecord
  | RewindRecord
  | FailedRecord;

/** The rewind store of sessions in `sessionFolder`: one per workspace, shared by its sessions. */
export function storeDir(sessionFolder: string): string {
  return join(sessionFolder, "rewind.git");
}

/** `<session path without .jsonl>.rewind`. */
export function recordsPath(sessionPath: string): string {
  return `${sessionPath.replace(/\.jsonl$/, "")}.rewind`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const WHAT = { what: "checkpoint log" };

/**
 * Appends `record` as one line. Synchronous, so a turn that is killed next keeps it.
 * @throws {SessionFileError} when the log is a link, a FIFO or a device (never written through).
 */
export function appendRecord(sessionPath: string, record: CheckpointRecord): void {
  using file = openRegularFileSync(recordsPath(sessionPath), {
    append: true,
    create: true,
    mode: 0o600,
    ...WHAT,
  });
  const bytes = encoder.encode(`${JSON.stringify(record)}\n`);
  for (let written = 0; written < bytes.length;) {
    written += file.writeSync(bytes.subarray(written));
  }
}

/**
 * The records of a session in the order written; a torn or unknown line is skipped.
 * @throws {SessionFileError} when the log is a link, a FIFO or a device (never read).
 */
export async function readRecords(sessionPath: string): Promise<CheckpointRecord[]> {
  let text: string;
  try {
    using file = await openRegularFile(recordsPath(sessionPath), { read: true, ...WHAT });
    text = decoder.decode(await readAll(file));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const records: CheckpointRecord[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const record = JSON.parse(line) as CheckpointRecord;
      const known = record.kind === "before" || record.kind === "after" ||
        record.kind === "rewind" || record.kind === "failed" ||
        (record.kind === "rewind-start" && validStart(record));
      if (known && typeof record.entryId === "string" && typeof record.time === "string") {
        records.push(record);
      }
    } catch {
      // A line torn by a crash.
    }
  }
  return records;
}

/** The whole of `file`, read in chunks (it may grow while read). */
async function readAll(file: Deno.FsFile): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const chunk = new Uint8Array(64 * 1024);
    const read = await file.read(chunk);
    if (read === null) break;
    chunks.push(chunk.subarray(0, read));
    length += read;
  }
  const all = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}

function validStart(record: RewindStartRecord): boolean {
  return typeof record.id === "string" && typeof record.to === "string" &&
    typeof record.before?.tree === "string" && Array.isArray(record.before.skipped);
}
