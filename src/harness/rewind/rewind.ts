/**
 * Rewind: back to the moment before an earlier user turn, for the conversation (the leaf moves
 * to before that message: a branch), the files (the workspace as the turn's checkpoint holds
 * it), or both. A plan is made first (the diff, the conflicts) and shown; applying it records a
 * rewind, itself a checkpoint, so `undo` goes back. The one seam every front end calls: the CLI
 * (`tern sessions rewind`), the interactive `/rewind` and an RPC command.
 */
import { dirname } from "../../core/path.ts";
import { TernError } from "../../core/errors.ts";
import type { PermissionRule } from "../../config/schema.ts";
import type { PathTest } from "../../sandbox/denied_paths.ts";
import { hiddenInWorkspace } from "../path_denials.ts";
import { moveLeaf } from "../../session/branch.ts";
import type { Session } from "../../session/session.ts";
import type { MessageEntry } from "../../session/types.ts";
import { appendRecord, type CheckpointRecord, readRecords, storeDir } from "./records.ts";
import { encodeBase64, type RestoreOp, runRestore } from "./restore_ops.ts";
import { ShadowStore, type Snapshot, type TreeChange } from "./shadow_store.ts";
import { DEFAULT_MAX_FILE_BYTES } from "./turn_checkpoints.ts";

/** What to restore. */
export type RewindScope = "files" | "conversation" | "both";

/** A user turn that can be rewound to. */
export interface UserTurn {
  entryId: string;
  /** The request, whitespace collapsed. */
  text: string;
  timestamp: string;
}

/** What a rewind would do; made by {@linkcode planRewind}, carried out by {@linkcode applyRewind}. */
export interface RewindPlan {
  /** The user entry rewound to, or "undo" (the last rewind taken back). */
  target: string;
  scope: RewindScope;
  /** Where the leaf goes (the entry before the user message); absent: it stays. */
  leaf?: string | null;
  /** The files' changes, from the workspace now to the checkpoint (none: files stay). */
  changes: TreeChange[];
  /** The same as a patch with a summary of sizes (`git diff --stat -p`), for a person. */
  patch: string;
  /**
   * Paths the restore would change that were also changed outside tern (between turns, or by
   * the person since the last one): never overwritten unless the person says so.
   */
  conflicts: string[];
  /** Paths over the size limit now: the restore replaces them and cannot undo that. */
  unsaved: string[];
  /** The checkpoint's files left alone because they were over the size limit then. */
  skipped: string[];
  /**
   * Files the checkpoint does not hold but its `.gitignore` files ignore (the person's `.env`,
   * data, builds: there, unseen, all along): left alone, never removed.
   */
  ignored: string[];
  /** The workspace now (recorded by the rewind, so it can be undone). */
  current?: Snapshot;
}

/** What {@linkcode applyRewind} did. */
export interface RewindResult {
  written: string[];
  deleted: string[];
  /** Paths left as they were: conflicts kept, and the plan's `ignored` files. */
  kept: string[];
  /** The branch entry when the conversation moved. */
  leaf?: string | null;
}

/** Options of {@linkcode planRewind}. */
export interface RewindOptions {
  /** Absolute real path of the workspace (the session's). */
  workspace: string;
  scope: RewindScope;
  maxFileBytes?: number;
  /** The person's rules (the config's): what their deny rules hide is never read or restored. */
  rules: readonly PermissionRule[];
}

/** The user turns on the session's current path, oldest first. */
export function userTurns(session: Session): UserTurn[] {
  return session.entriesTo().flatMap((entry) =>
    entry.type === "message" && entry.message.role === "user"
      ? [{
        entryId: entry.id,
        text: entry.message.content.replace(/\s+/g, " ").trim(),
        timestamp: entry.timestamp,
      }]
      : []
  );
}

/**
 * Plans a rewind to user entry `target` (any branch), or `"undo"` for the last rewind.
 * @throws {TernError} for an entry that is not a user message, or nothing to undo.
 */
export async function planRewind(
  session: Session,
  target: string,
  options: RewindOptions,
): Promise<RewindPlan> {
  const records = await readRecords(session.path);
  const wantsFiles = options.scope !== "conversation";
  const wantsConversation = options.scope !== "files";
  let start: number;
  let state: Snapshot | undefined;
  let leaf: string | null | undefined;
  /** The files as tern left them at `start` (undo: as the rewind left them). */
  let ended: string | undefined;
  if (target === "undo") {
    start = records.findLastIndex((record) => record.kind === "rewind");
    const last = records[start];
    if (last?.kind !== "rewind") throw new TernError("Cannot undo a rewind: there was none");
    state = wantsFiles ? last.before : undefined;
    leaf = wantsConversation ? last.fromLeaf : undefined;
    ended = last.after?.tree;
    // The rewind's own changes are tern's: conflicts are what changed after it.
    start++;
  } else {
    const entry = userEntry(session, target);
    leaf = wantsConversation ? entry.parentId : undefined;
    start = records.findIndex((record) =>
      (record.kind === "before" && record.entryId === entry.id) || record.time >= entry.timestamp
    );
    state = start < 0 || !wantsFiles ? undefined : startState(records[start]);
  }
  const plan: RewindPlan = {
    target,
    scope: options.scope,
    changes: [],
    patch: "",
    conflicts: [],
    unsaved: [],
    skipped: state?.skipped ?? [],
    ignored: [],
  };
  if (leaf !== undefined) plan.leaf = leaf;
  if (state === undefined) return plan;
  const store = await openStore(session, options);
  const hidden = await hiddenTest(options.workspace, options.rules);
  const current = await store.snapshot(hidden);
  plan.current = current;
  const skipped = new Set(state.skipped);
  const all = await store.changes(current.tree, state.tree);
  const changes = all.filter((change) => !skipped.has(change.path) && !hidden?.(change.path));
  // A rule the turn changed can show files the checkpoint never saw: those are not its to remove.
  const removed = changes.filter((change) => change.newMode === "000000").map((c) => c.path);
  const ignored = new Set(await store.ignoredBy(state.tree, removed));
  plan.ignored = removed.filter((path) => ignored.has(path));
  plan.changes = changes.filter((change) => !ignored.has(change.path));
  if (plan.changes.length === 0) return plan;
  const only = plan.changes.length < all.length
    ? plan.changes.map((change) => change.path)
    : undefined;
  plan.patch = await store.patch(current.tree, state.tree, undefined, only);
  const external = await externalChanges(store, records.slice(start), current, ended);
  plan.conflicts = plan.changes.map((c) => c.path).filter((path) => external.has(path));
  const nowSkipped = new Set(current.skipped);
  plan.unsaved = plan.changes.map((c) => c.path).filter((path) => nowSkipped.has(path));
  return plan;
}

/**
 * Carries out `plan`: the files (conflicting paths only when `overwrite` is true), then the
 * leaf; records the rewind. @throws {TernError} when a file cannot be restored safely (what was
 * done before stays, and is recorded).
 */
export async function applyRewind(
  session: Session,
  plan: RewindPlan,
  options: RewindOptions & { overwrite?: boolean },
): Promise<RewindResult> {
  const result: RewindResult = { written: [], deleted: [], kept: [...plan.ignored] };
  const conflicts = new Set(options.overwrite ? [] : plan.conflicts);
  const store = plan.changes.length > 0 ? await openStore(session, options) : undefined;
  const record: Extract<CheckpointRecord, { kind: "rewind" }> = {
    kind: "rewind",
    entryId: plan.target,
    time: new Date().toISOString(),
    kept: [],
  };
  let failed = false;
  try {
    if (store !== undefined) {
      record.before = plan.current;
      const todo = plan.changes.filter((change) => {
        if (!conflicts.has(change.path)) return true;
        result.kept.push(change.path);
        return false;
      });
      // Removals first: a symlink or file leaves before something is written below its name.
      const ops: RestoreOp[] = [];
      for (const change of todo) {
        if (change.newMode !== "000000" && change.status !== "type") continue;
        ops.push({ op: "remove", path: change.path });
      }
      for (const change of todo) {
        if (change.newMode === "000000" || change.newMode === "160000") continue;
        const bytes = await store.blob(change.newId);
        ops.push(
          change.newMode === "120000"
            ? { op: "link", path: change.path, target: new TextDecoder().decode(bytes) }
            : {
              op: "write",
              path: change.path,
              data: encodeBase64(bytes),
              executable: change.newMode === "100755",
            },
        );
      }
      const answer = await runRestore(options.workspace, ops);
      for (const op of ops.slice(0, answer.done)) {
        if (op.op === "remove") {
          if (!ops.some((later) => later.op !== "remove" && later.path === op.path)) {
            result.deleted.push(op.path);
          }
        } else {
          result.written.push(op.path);
        }
      }
      if (answer.error !== undefined) throw new TernError(answer.error);
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    if (store !== undefined) {
      record.after = await hiddenTest(options.workspace, options.rules).then((hidden) =>
        store.snapshot(hidden)
      )
        .catch(() => undefined);
    }
    record.kept = result.kept;
    // The conversation goes back only with its files: a restore that stopped partway leaves it
    // where it was (the record lets `undo` put back what was restored).
    if (plan.leaf !== undefined && !failed) {
      record.fromLeaf = session.leafId;
      moveLeaf(session, plan.leaf);
      result.leaf = plan.leaf;
    }
    if (store !== undefined || plan.leaf !== undefined) appendRecord(session.path, record);
  }
  return result;
}

function userEntry(session: Session, id: string): MessageEntry {
  const matches = session.entries.filter((entry) => entry.id.startsWith(id));
  const entry = matches.length === 1 ? matches[0] : session.get(id);
  if (entry?.type !== "message" || entry.message.role !== "user") {
    throw new TernError(
      `Cannot rewind to "${id}": not a user message of this session (see \`tern sessions tree\`)`,
    );
  }
  return entry;
}

/** The workspace as it was when `record` began. */
function startState(record: CheckpointRecord): Snapshot | undefined {
  if (record.kind === "rewind") return record.before ?? record.after;
  return { tree: record.tree, skipped: record.skipped };
}

/**
 * Paths changed outside tern over `records` (from the rewind's point on) and since the last of
 * them: between one turn's end and the next checkpoint, and from the last turn's end to now. A
 * turn without an end (tern was killed) counts as running until the next checkpoint.
 */
async function externalChanges(
  store: ShadowStore,
  records: readonly CheckpointRecord[],
  current: Snapshot,
  ended: string | undefined,
): Promise<Set<string>> {
  const paths = new Set<string>();
  const gap = async (from: string | undefined, to: string | undefined) => {
    if (from === undefined || to === undefined) return;
    for (const change of await store.changes(from, to)) paths.add(change.path);
  };
  for (const record of records) {
    if (record.kind === "before") {
      await gap(ended, record.tree);
      ended = undefined;
    } else if (record.kind === "after") {
      ended = record.tree;
    } else {
      await gap(ended, record.before?.tree);
      ended = record.after?.tree ?? ended;
    }
  }
  await gap(ended, current.tree);
  return paths;
}

/** What the person's deny rules hide in `workspace` (hiddenInWorkspace); undefined for nothing. */
async function hiddenTest(
  workspace: string,
  rules: readonly PermissionRule[],
): Promise<PathTest | undefined> {
  return (await hiddenInWorkspace(workspace, rules))?.test;
}

function openStore(session: Session, options: RewindOptions): Promise<ShadowStore> {
  return ShadowStore.open(storeDir(dirname(session.path)), options.workspace, {
    indexName: session.id,
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  });
}
