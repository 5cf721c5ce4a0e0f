/**
 * A rewind stopped partway: its `rewind-start` record was written, its `rewind` record never was
 * (tern was killed while the files were being restored). Its files are then a mix, each as it
 * was before the rewind or as the rewind was restoring it, matching no checkpoint. Whoever opens
 * the session next is told, with the commands that finish it (the same rewind again) or put the
 * files back (undo), until a turn or another rewind follows it.
 */
import { type CheckpointRecord, readRecords, type RewindStartRecord } from "./records.ts";

/** The ids of the rewinds that ended (their `rewind` record was written). */
export function finishedRewinds(records: readonly CheckpointRecord[]): Set<string> {
  return new Set(
    records.flatMap((record) =>
      record.kind === "rewind" && record.id !== undefined ? [record.id] : []
    ),
  );
}

/**
 * The rewind stopped partway that nothing followed on the files (no turn changed them since, no
 * other rewind restored any); undefined when there is none.
 */
export function interruptedRewind(
  records: readonly CheckpointRecord[],
): RewindStartRecord | undefined {
  const finished = finishedRewinds(records);
  let pending: RewindStartRecord | undefined;
  for (const record of records) {
    if (record.kind === "rewind-start") {
      if (!finished.has(record.id)) pending = record;
    } else if (record.kind !== "rewind" || record.id !== undefined) {
      // A rewind without a start moved only the conversation: the files are as they were.
      pending = undefined;
    }
  }
  return pending;
}

/**
 * How a front end spells a rewind to `target` ("undo" or an entry id); `again`: the rewind
 * stopped partway that it runs again, whose choices (what to restore, conflicts) it repeats.
 */
export type RewindCommand = (target: string, again?: RewindStartRecord) => string;

/** `tern sessions rewind` as the command that runs `target` for session `sessionId`. */
export function cliRewindCommand(sessionId: string): RewindCommand {
  return (target, again) =>
    `tern sessions rewind ${sessionId} ${target} --yes` +
    (again?.scope === "files" ? " --restore files" : "") +
    (again?.conflicts === undefined ? "" : ` --conflicts ${again.conflicts}`);
}

/**
 * What to tell about `start`, a rewind stopped partway: what state the files are in and the
 * commands (spelled by `command`) that finish it or put the files back.
 */
export function describeInterrupted(start: RewindStartRecord, command: RewindCommand): string {
  const what = start.entryId === "undo"
    ? "The undo of a rewind"
    : `The rewind to before entry "${start.entryId.slice(0, 8)}"`;
  const state = `${what} started ${start.time} was stopped partway: the workspace's files are ` +
    `partly restored (of the ${start.changes} file(s) it was changing, some are still as they ` +
    "were and some already restored)" +
    (start.scope === "both" ? ", and the conversation did not move" : "");
  const finish = `Finish it with \`${command(start.entryId, start)}\``;
  // Undoing an undo would take back the rewind before it: the way back is that rewind again.
  if (start.entryId === "undo") return `${state}. ${finish}`;
  return `${state}. ${finish}, or put the files back as they were before it with ` +
    `\`${command("undo")}\``;
}

/**
 * The warning for the session at `sessionPath` (id `sessionId`) when its last rewind was
 * stopped partway, naming the `tern sessions rewind` commands; undefined when it was not, or
 * its log cannot be read. Never throws.
 */
export async function interruptedRewindNotice(
  sessionPath: string,
  sessionId: string,
): Promise<string | undefined> {
  const records = await readRecords(sessionPath).catch(() => []);
  const start = interruptedRewind(records);
  return start === undefined ? undefined : describeInterrupted(start, cliRewindCommand(sessionId));
}
