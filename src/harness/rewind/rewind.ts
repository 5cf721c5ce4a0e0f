/**
 * Rewind: back to the moment before an earlier user turn, for the conversation (the leaf moves
 * to before that message: a branch), the files (the workspace as the turn's checkpoint holds
 * it), or both. A plan is made first (the diff, the conflicts) and shown; applying it records a
 * rewind, itself a checkpoint, so `undo` goes back. Its start is recorded before a file changes:
 * one stopped partway is known (interrupted.ts), the next rewind counts what it restored as
 * tern's, and undo takes it back. The one seam every front end calls: the CLI
 * (`tern sessions rewind`), the interactive `/rewind` and an RPC command.
 */
import { basename, dirname } from "../../core/path.ts";
import { TernError } from "../../core/errors.ts";
import { SessionChoiceError } from "../errors.ts";
import type { PermissionRule } from "../../config/schema.ts";
import type { PathTest } from "../../sandbox/denied_paths.ts";
import { hiddenInWorkspace, personDenials } from "../path_denials.ts";
import { moveLeaf } from "../../session/branch.ts";
import type { Session } from "../../session/session.ts";
import type { MessageEntry } from "../../session/types.ts";
import { finishedRewinds, interruptedRewind } from "./interrupted.ts";
import {
  appendRecord,
  type CheckpointRecord,
  readRecords,
  type RewindRecord,
  type RewindStartRecord,
  storeDir,
} from "./records.ts";
import { ownCodeIn, type RestoreOp, runRestore } from "./restore_ops.ts";
import { MAX_FOLDER_DEPTH, neverRestored, SCRATCH_PREFIX } from "./safe_files.ts";
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
  /**
   * Files on disk now that no checkpoint can hold (over the size limit, or named as git cannot
   * store) and the checkpoint did not have (made since, or unseen then): left as they are.
   */
  unheld: string[];
  /**
   * The workspace now, recorded by the rewind so that undo puts it back; when this rewind
   * follows one stopped partway and nothing else changed the files since, the workspace before
   * that one instead, so that undo goes back past the mix it left.
   */
  current?: Snapshot;
  /**
   * The tree of the workspace as the plan saw it: {@linkcode applyRewind} refuses the plan when
   * a file it would restore changed since (the person may take their time over the preview).
   */
  seen?: string;
  /** The tree the files are restored from (absent: files stay). */
  to?: string;
}

/** What {@linkcode applyRewind} did. */
export interface RewindResult {
  written: string[];
  deleted: string[];
  /** Paths left as they were: conflicts kept, and the plan's `ignored` and `unheld` files. */
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
  /** Most files one snapshot reads (the `rewindMaxFiles` setting; the store's default). */
  maxFiles?: number;
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
 * @throws {SessionChoiceError} for an entry that is not a user message, or nothing to undo.
 */
export async function planRewind(
  session: Session,
  target: string,
  options: RewindOptions,
): Promise<RewindPlan> {
  const records = await readRecords(session.path);
  const finished = finishedRewinds(records);
  const wantsFiles = options.scope !== "conversation";
  const wantsConversation = options.scope !== "files";
  let start: number;
  let state: Snapshot | undefined;
  let leaf: string | null | undefined;
  /** The files as tern left them at `start` (undo: as the rewind left them). */
  let ended: Left | undefined;
  if (target === "undo") {
    // The last rewind, or one stopped partway; not an undo stopped partway: undo again
    // finishes that one (it takes back the same rewind).
    start = records.findLastIndex((record) =>
      record.kind === "rewind" ||
      (record.kind === "rewind-start" && record.entryId !== "undo" && !finished.has(record.id))
    );
    const last = records[start];
    if (last?.kind === "rewind") {
      state = wantsFiles ? last.before : undefined;
      leaf = wantsConversation ? last.fromLeaf : undefined;
      ended = last.after === undefined ? undefined : { tree: last.after.tree };
    } else if (last?.kind === "rewind-start") {
      // Stopped partway: the files go back as they were before it; the leaf never moved.
      state = wantsFiles ? last.before : undefined;
      ended = { partly: last };
    } else {
      throw new SessionChoiceError("Cannot undo a rewind: there was none in this session");
    }
    // The rewind's own changes are tern's: conflicts are what changed after it.
    start++;
  } else {
    const entry = userEntry(session, target);
    leaf = wantsConversation ? entry.parentId : undefined;
    // A `failed` record holds no files: the first checkpoint at or after the message does.
    start = records.findIndex((record) =>
      record.kind !== "failed" &&
      ((record.kind === "before" && record.entryId === entry.id) ||
        record.time >= entry.timestamp)
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
    unheld: [],
  };
  if (leaf !== undefined) plan.leaf = leaf;
  if (state === undefined) return plan;
  plan.to = state.tree;
  const store = await openStore(session, options);
  const hidden = await hiddenTest(options.workspace, options.rules);
  const skipped = new Set(state.skipped);
  // Files a rule written since hides, which the checkpoint's own rules would have stored: made
  // since, so the rewind takes them away too (as conflicts: no checkpoint saw them come).
  const hiddenSince = await restorableIgnored(store, state.tree, hidden, skipped);
  const current = await snapshotNow(session, options, hidden, hiddenSince);
  plan.current = current;
  plan.seen = current.tree;
  const interrupted = interruptedRewind(records);
  if (interrupted !== undefined && records[start - 1] !== interrupted) {
    const since = await externalChanges(store, [], current, { partly: interrupted }, finished);
    if (since.size === 0) plan.current = interrupted.before;
  }
  const all = await store.changes(current.tree, state.tree);
  // What the checkpoint holds is among the changes (restored; `unsaved` when too large now).
  const inChanges = new Set(all.map((change) => change.path));
  plan.unheld = [...current.skipped, ...current.unstorable ?? []].filter((path) =>
    !inChanges.has(path) && !skipped.has(path) && !hidden?.(path)
  );
  // A temporary file a killed restore left is never written back (an undo would), and the
  // workspace's `.tern` (its settings and memory, which only the person and tern write),
  // anything named `.git` and tern's own code are not the rewind's (the restore's view keeps
  // them read-only: restore_ops.ts).
  const ownCode = ownCodeIn(options.workspace).map((path) =>
    path.slice(options.workspace.length + 1)
  );
  const changes = all.filter((change) =>
    !skipped.has(change.path) && !hidden?.(change.path) &&
    !(change.newMode !== "000000" && basename(change.path).startsWith(SCRATCH_PREFIX)) &&
    !neverRestored(change.path) && !ownCode.some((own) => atOrUnder(change.path, own))
  );
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
  const external = await externalChanges(store, records.slice(start), current, ended, finished);
  plan.conflicts = plan.changes.map((c) => c.path).filter((path) => external.has(path));
  const nowSkipped = new Set(current.skipped);
  plan.unsaved = plan.changes.map((c) => c.path).filter((path) => nowSkipped.has(path));
  return plan;
}

/**
 * Carries out `plan`: the files (conflicting paths only when `overwrite` is true), then the
 * leaf; records the rewind. Before the first file changes it records that the rewind started,
 * so that one stopped partway (tern killed) is known ({@linkcode interruptedRewind}); a caller
 * defers the signals that would stop it. @throws {TernError} when a file cannot be restored
 * safely (what was done before stays, and is recorded).
 */
export async function applyRewind(
  session: Session,
  plan: RewindPlan,
  options: RewindOptions & { overwrite?: boolean },
): Promise<RewindResult> {
  const result: RewindResult = {
    written: [],
    deleted: [],
    kept: [...plan.ignored, ...plan.unheld],
  };
  const conflicts = new Set(options.overwrite ? [] : plan.conflicts);
  const store = plan.changes.length > 0 ? await openStore(session, options) : undefined;
  const before = store === undefined
    ? undefined
    : await workspaceAsShown(session, plan, store, options, conflicts);
  const record: RewindRecord = {
    kind: "rewind",
    entryId: plan.target,
    time: new Date().toISOString(),
    kept: [],
  };
  let failed = false;
  try {
    if (store !== undefined) {
      record.before = before;
      const todo = plan.changes.filter((change) => {
        if (!conflicts.has(change.path)) return true;
        result.kept.push(change.path);
        return false;
      });
      // Removals first: a symlink or file leaves before something is written below its name.
      const ops: PlannedOp[] = [];
      for (const change of todo) {
        if (change.newMode !== "000000" && change.status !== "type") continue;
        ops.push({ op: "remove", path: change.path });
      }
      for (const change of todo) {
        if (change.newMode === "000000" || change.newMode === "160000") continue;
        ops.push({
          op: change.newMode === "120000" ? "link" : "write",
          path: change.path,
          id: change.newId,
          executable: change.newMode === "100755",
        });
      }
      // Found before anything changes, not by the restore partway through: a folder holding
      // files the checkpoints do not hold (ignored, or hidden by a deny rule) where a file goes
      // back would stop the restore after every file before it was written.
      // What commands may not write stays read-only in the restore's view too: a folder swapped
      // for a link into it while the restore runs leads nowhere writable.
      const keep = await keptByRules(options.workspace, options.rules, ops);
      const blocked = await blockedPaths(options.workspace, ops, keep);
      if (blocked.length > 0) {
        throw new TernError(
          `Cannot rewind: ${blocked.map((path) => `"${path}"`).join(", ")} ` +
            `${blocked.length === 1 ? "is a folder" : "are folders"} with files in it where a ` +
            "file goes back (files the checkpoints do not hold: ignored, or hidden by a deny " +
            "rule). Nothing was changed: move those files away and run the rewind again",
        );
      }
      if (ops.length > 0) {
        record.id = crypto.randomUUID();
        appendRecord(session.path, {
          kind: "rewind-start",
          id: record.id,
          entryId: plan.target,
          time: record.time,
          scope: plan.scope === "both" ? "both" : "files",
          before: before!,
          to: plan.to!,
          changes: todo.length,
          ...(plan.conflicts.length === 0
            ? {}
            : { conflicts: options.overwrite ? "overwrite" : "keep" }),
        });
      }
      // The contents are read as they are sent, a batch at a time: never all in memory.
      const answer = await runRestore(options.workspace, restoreOps(store, ops), { keep });
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
        snapshotNow(session, options, hidden)
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

/**
 * Files ignored now that the checkpoint `tree`'s own rules would have stored (see
 * `ShadowStore.ignoredSince()`), but for those `hidden`, `skipped` or never restored.
 */
async function restorableIgnored(
  store: ShadowStore,
  tree: string,
  hidden: PathTest | undefined,
  skipped: ReadonlySet<string>,
): Promise<string[]> {
  return (await store.ignoredSince(tree)).filter((path) =>
    !hidden?.(path) && !skipped.has(path) && !neverRestored(path)
  );
}

/**
 * The workspace before the restore of `plan`, as its record keeps it for undo: `plan.current`,
 * or, when files the rewind leaves alone changed since the plan was made, the workspace now (so
 * that undo keeps those changes). @throws {TernError} when a file the rewind would write or
 * remove (but for those `kept`) changed since the plan was made: nothing is changed then.
 */
async function workspaceAsShown(
  session: Session,
  plan: RewindPlan,
  store: ShadowStore,
  options: RewindOptions,
  kept: ReadonlySet<string>,
): Promise<Snapshot | undefined> {
  if (plan.seen === undefined || plan.to === undefined) return plan.current;
  const hidden = await hiddenTest(options.workspace, options.rules);
  const extra = await restorableIgnored(store, plan.to, hidden, new Set(plan.skipped));
  const now = await snapshotNow(session, options, hidden, extra);
  if (now.tree === plan.seen) return plan.current;
  const changed = new Set((await store.changes(plan.seen, now.tree)).map((change) => change.path));
  const stale = plan.changes.map((change) => change.path).filter((path) =>
    changed.has(path) && !kept.has(path)
  );
  if (stale.length > 0) {
    const named = stale.slice(0, 5).map((path) => JSON.stringify(path)).join(", ") +
      (stale.length > 5 ? ` and ${stale.length - 5} more` : "");
    throw new TernError(
      `Cannot rewind: ${named} changed since the rewind was shown. Nothing was changed: ` +
        "look at the rewind again",
    );
  }
  return plan.current?.tree === plan.seen ? now : plan.current;
}

/** An operation of the restore, with the blob its content comes from. */
type PlannedOp =
  | { op: "remove"; path: string }
  | { op: "link" | "write"; path: string; id: string; executable: boolean };

/** `ops` as the restore takes them, each file's content read from `store` only as it is sent. */
async function* restoreOps(
  store: ShadowStore,
  ops: readonly PlannedOp[],
): AsyncGenerator<RestoreOp> {
  const written: Exclude<PlannedOp, { op: "remove" }>[] = [];
  for (const op of ops) {
    if (op.op === "remove") yield op;
    else written.push(op);
  }
  let i = 0;
  for await (const bytes of store.eachBlob(written.map((op) => op.id))) {
    const { op, path, executable } = written[i++];
    yield op === "link"
      ? { op, path, target: new TextDecoder().decode(bytes) }
      : { op, path, data: bytes, executable };
  }
}

/**
 * The absolute paths in `workspace` that the person's deny rules (`rules`) keep from commands,
 * as the sandbox's view finds them: hidden ones, and read-only ones but for those `ops` write or
 * remove at or below (a conflict the person chose to overwrite).
 */
async function keptByRules(
  workspace: string,
  rules: readonly PermissionRule[],
  ops: readonly PlannedOp[],
): Promise<string[]> {
  const denials = await personDenials(rules);
  if (denials === null) return [];
  const { findDeniedPaths } = await import("../../sandbox/denied_paths.ts");
  const found = await findDeniedPaths(workspace, denials);
  // Each path an op names, and every folder above it.
  const touched = new Set<string>();
  for (const op of ops) {
    for (let end = op.path.length; end > 0; end = op.path.lastIndexOf("/", end - 1)) {
      touched.add(`${workspace}/${op.path.slice(0, end)}`);
    }
  }
  return [...found.hidden, ...found.readOnly.filter((path) => !touched.has(path))];
}

/** Whether `path` is `folder` or lies below it (both relative, or both absolute). */
function atOrUnder(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

/**
 * The paths of `ops` that a file or link is written to but where a folder with entries stands
 * and no earlier op removes it: the restore would refuse each (`clearFolder`), as it refuses a
 * folder holding one of `kept` (absolute paths the restore's view keeps read-only: it cannot
 * remove them). Each path is walked part by part with lstat, as the restore does: below a link,
 * a file, a missing folder or one an earlier removal takes away, nothing stands in the way (the
 * restore makes the folders afresh, or refuses a link), and no link is followed, so no folder
 * outside is listed.
 */
async function blockedPaths(
  workspace: string,
  ops: readonly PlannedOp[],
  kept: readonly string[],
): Promise<string[]> {
  const keeps = new Set(kept.map((path) => path.slice(workspace.length + 1)));
  const removed = new Set(ops.filter((op) => op.op === "remove").map((op) => op.path));
  const lstat = (path: string) => Deno.lstat(`${workspace}/${path}`).catch(() => undefined);
  /**
   * Whether folder `path` holds anything the removals before the writes leave (`safe_files`
   * removes the folders they leave empty, and a tree of folders only); past
   * {@linkcode MAX_FOLDER_DEPTH} folders deep, as the restore, it counts as holding something.
   */
  const keepsSomething = async (path: string, depth = 0): Promise<boolean> => {
    if (depth > MAX_FOLDER_DEPTH) return true;
    for await (const entry of Deno.readDir(`${workspace}/${path}`)) {
      const inner = `${path}/${entry.name}`;
      if (removed.has(inner)) continue;
      if (keeps.has(inner)) return true;
      const info = await lstat(inner);
      if (!info?.isDirectory || await keepsSomething(inner, depth + 1)) return true;
    }
    return false;
  };
  const reached = async (path: string): Promise<boolean> => {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      if (removed.has(folder) || !(await lstat(folder))?.isDirectory) return false;
    }
    return true;
  };
  const blocked: string[] = [];
  for (const op of ops) {
    if (op.op === "remove" || removed.has(op.path) || !(await reached(op.path))) continue;
    const info = await lstat(op.path);
    if (info?.isDirectory && await keepsSomething(op.path).catch(() => true)) {
      blocked.push(op.path);
    }
  }
  return blocked;
}

function userEntry(session: Session, id: string): MessageEntry {
  const matches = session.entries.filter((entry) => entry.id.startsWith(id));
  const entry = matches.length === 1 ? matches[0] : session.get(id);
  if (entry?.type !== "message" || entry.message.role !== "user") {
    // Bad input, as an unknown entry elsewhere: exit code 2.
    throw new SessionChoiceError(
      `Cannot rewind to "${id}": not a user message of this session (see ` +
        `\`tern sessions tree ${session.id}\`)`,
    );
  }
  return entry;
}

/** The workspace as it was when `record` began. */
function startState(record: CheckpointRecord): Snapshot | undefined {
  if (record.kind === "rewind") return record.before ?? record.after;
  if (record.kind === "rewind-start") return record.before;
  if (record.kind === "failed") return undefined;
  return { tree: record.tree, skipped: record.skipped };
}

/** The tree `left` describes: a rewind stopped partway counts from before it. */
function leftTree(left: Left): string {
  return "tree" in left ? left.tree : left.partly.before.tree;
}

/**
 * How tern left the files: a tree, or (a rewind stopped partway) each path as it was before that
 * rewind or as the rewind was restoring it.
 */
type Left = { tree: string } | { partly: RewindStartRecord };

/**
 * Paths changed outside tern over `records` (from the rewind's point on) and since the last of
 * them: between one turn's end and the next checkpoint, and from the last turn's end to now. A
 * turn without an end (tern was killed) counts as running until the next checkpoint. Where
 * checkpoints stopped (a `failed` record), nothing tells tern's changes from others' until the
 * next checkpoint (or now), so every path changed over that stretch counts. `finished`: the ids
 * of the rewinds that ended (their start records are skipped: their own follows).
 */
async function externalChanges(
  store: ShadowStore,
  records: readonly CheckpointRecord[],
  current: Snapshot,
  ended: Left | undefined,
  finished: ReadonlySet<string>,
): Promise<Set<string>> {
  const paths = new Set<string>();
  const every = async (from: string, to: string) => {
    for (const change of await store.changes(from, to)) paths.add(change.path);
  };
  const gap = async (from: Left | undefined, to: string | undefined) => {
    if (from === undefined || to === undefined) return;
    if ("tree" in from) return await every(from.tree, to);
    // A path that is now neither as it was before that rewind nor as it was restoring it, and
    // not a temporary file its restore left when it was killed.
    const { before, to: restoring } = from.partly;
    const unlikeRestored = new Set((await store.changes(restoring, to)).map((c) => c.path));
    for (const change of await store.changes(before.tree, to)) {
      const scratch = basename(change.path).startsWith(SCRATCH_PREFIX);
      if (unlikeRestored.has(change.path) && !scratch) paths.add(change.path);
    }
  };
  /** The tree of the latest checkpoint, and of the last one before checkpoints stopped. */
  let last = ended === undefined ? undefined : leftTree(ended);
  let lost: string | undefined;
  for (const record of records) {
    if (record.kind === "failed") {
      lost ??= last;
      continue;
    }
    const next = startState(record)?.tree;
    if (lost !== undefined && next !== undefined) {
      await every(lost, next);
      lost = undefined;
    }
    last = record.kind === "rewind"
      ? record.after?.tree ?? next
      : record.kind === "rewind-start"
      ? record.before.tree
      : record.tree;
    if (record.kind === "before") {
      await gap(ended, record.tree);
      ended = undefined;
    } else if (record.kind === "after") {
      ended = { tree: record.tree };
    } else if (record.kind === "rewind-start") {
      if (finished.has(record.id)) continue;
      await gap(ended, record.before.tree);
      ended = { partly: record };
    } else {
      await gap(ended, record.before?.tree);
      ended = record.after === undefined ? ended : { tree: record.after.tree };
    }
  }
  if (lost !== undefined) await every(lost, current.tree);
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

function openStore(
  session: Session,
  options: RewindOptions,
  throwawayIndex?: "copy" | "empty",
): Promise<ShadowStore> {
  return ShadowStore.open(storeDir(dirname(session.path)), options.workspace, {
    indexName: session.id,
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    ...(options.maxFiles === undefined ? {} : { maxFiles: options.maxFiles }),
    ...(throwawayIndex === undefined ? {} : { throwawayIndex }),
  });
}

/**
 * The workspace now, snapshotted on an index of its own: a copy of the session's, then, when
 * that fails, none (every file read). The session's index is only a cache: one a killed git
 * left locked, or damaged, must not stop a rewind to a good checkpoint.
 */
async function snapshotNow(
  session: Session,
  options: RewindOptions,
  hidden: PathTest | undefined,
  extra: readonly string[] = [],
): Promise<Snapshot> {
  const store = await openStore(session, options, "copy");
  try {
    return await store.snapshot(hidden, undefined, extra);
  } catch (error) {
    if (!(error instanceof TernError)) throw error;
  } finally {
    store.discard();
  }
  const fresh = await openStore(session, options, "empty");
  try {
    return await fresh.snapshot(hidden, undefined, extra);
  } finally {
    fresh.discard();
  }
}
