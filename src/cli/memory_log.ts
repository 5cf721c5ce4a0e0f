/**
 * `tern memory log` and `tern memory undo <id>`: the background consolidations recorded in
 * this workspace's sessions, and restoring the topic files one of them changed.
 */
import { listSessions } from "../session/paths.ts";
import { loadSession } from "../session/load.ts";
import { consolidations } from "../harness/consolidation.ts";
import {
  type ConsolidatedFile,
  type ConsolidationRecord,
  restoreFiles,
} from "../context/consolidate.ts";
import { TernError } from "../core/errors.ts";
import { ConsolidationIdError } from "../memory/errors.ts";

/** One consolidation as the log shows it. */
export interface LoggedConsolidation {
  /** The session entry's id: what `tern memory undo` takes. */
  id: string;
  timestamp: string;
  sessionId: string;
  sessionPath: string;
  /** `done`, `pending`, or `undone` when a later entry undid it. */
  status: "done" | "pending" | "undone";
  files: string[];
  record: ConsolidationRecord;
}

/** The consolidations of `workspace`'s sessions, oldest first. */
export async function consolidationLog(
  ternHome: string,
  workspace: string,
): Promise<LoggedConsolidation[]> {
  const log: LoggedConsolidation[] = [];
  for (const info of await listSessions(ternHome, { cwd: workspace })) {
    let entries;
    try {
      entries = (await loadSession(info.path)).entries;
    } catch {
      continue;
    }
    const found = consolidations(entries);
    const undone = new Set(found.flatMap(({ record }) => record.undoes ? [record.undoes] : []));
    for (const { id, timestamp, record } of found) {
      // A record without its shape (a damaged session) is left out: it can be neither shown
      // nor undone, and the others still are.
      if (record.status === "undone" || !hasShape(record)) continue;
      log.push({
        id,
        timestamp,
        sessionId: info.id,
        sessionPath: info.path,
        status: undone.has(id) ? "undone" : record.status,
        files: (record.files ?? []).map((file) => file.path),
        record,
      });
    }
  }
  return log.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}

/**
 * Whether `record` (read from a session file) has the shape tern writes: a known status, its
 * points ids or null, and each file a path (confined again when restored) with its text before
 * and after.
 */
function hasShape(record: ConsolidationRecord): boolean {
  const point = (value: unknown) => value === null || typeof value === "string";
  const file = (value: unknown) => {
    const { path, before, after } = (value ?? {}) as Partial<ConsolidatedFile>;
    return typeof path === "string" && (before === null || typeof before === "string") &&
      typeof after === "string";
  };
  return (record.status === "done" || record.status === "pending") && point(record.upTo) &&
    point(record.from) &&
    (record.files === undefined || (Array.isArray(record.files) && record.files.every(file)));
}

/** The log as text lines. */
export function formatConsolidationLog(log: readonly LoggedConsolidation[]): string[] {
  if (log.length === 0) {
    return ["No consolidations yet: tern writes .tern/memory/ topic files after long sessions"];
  }
  return log.map((item) =>
    `${item.id}  ${item.timestamp.slice(0, 19).replace("T", " ")}  ${item.status.padEnd(7)}  ` +
    `session ${item.sessionId.slice(0, 8)}  ${
      item.files.length > 0 ? item.files.join(", ") : "(no files)"
    }`
  );
}

/**
 * Restores the files of the consolidation `idPrefix` names as they were before it, and records
 * the undo in its session when no other tern holds it.
 * @throws {ConsolidationIdError} when the id matches none or several, or it is not `done`.
 */
export async function undoConsolidation(
  ternHome: string,
  workspace: string,
  idPrefix: string,
): Promise<{ item: LoggedConsolidation; restored: string[]; changed: string[]; note?: string }> {
  const log = await consolidationLog(ternHome, workspace);
  const matches = idPrefix.length >= 4 ? log.filter((item) => item.id.startsWith(idPrefix)) : [];
  if (matches.length !== 1) {
    throw new ConsolidationIdError(
      matches.length === 0
        ? `Cannot undo consolidation "${idPrefix}": no consolidation of this workspace has that ` +
          "id (see tern memory log)"
        : `Cannot undo consolidation "${idPrefix}": it matches ${
          matches.map((item) => item.id).join(", ")
        }; give more of the id`,
    );
  }
  const [item] = matches;
  if (item.status !== "done") {
    throw new ConsolidationIdError(
      `Cannot undo consolidation "${item.id}": it is ${item.status}, not done`,
    );
  }
  let files;
  try {
    files = restoreFiles(workspace, item.record);
  } catch (error) {
    // The folder or a topic file is no longer one tern writes (a link, a FIFO, a huge file).
    const why = error instanceof Error ? error.message : String(error);
    throw new TernError(`Cannot undo consolidation "${item.id}": ${why}`, { cause: error });
  }
  const { restored, changed } = files;
  const { Session } = await import("../session/session.ts");
  let note: string | undefined;
  try {
    const session = await Session.open(item.sessionPath);
    try {
      session.append({
        type: "consolidation",
        data: {
          status: "undone",
          from: item.record.from,
          upTo: item.record.upTo,
          undoes: item.id,
        } satisfies ConsolidationRecord,
      });
    } finally {
      session.close();
    }
  } catch (error) {
    note = `The undo is not recorded in session ${item.sessionId.slice(0, 8)}: ${
      error instanceof Error ? error.message : error
    }`;
  }
  return { item, restored, changed, note };
}
