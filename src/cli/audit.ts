/** `tern audit [session]`: the audit log of one session, a line per tool call, or as JSONL. */
import { isAbsolute, join, resolve } from "../core/path.ts";
import { InputError } from "./errors.ts";
import { jsonForTerminal, terminalText, visibleText } from "../core/terminal_text.ts";
import {
  auditDir,
  auditPath,
  type AuditRecord,
  auditRecords,
  readDenoAudit,
} from "../sandbox/audit.ts";
import { SecretMasker } from "../sandbox/secrets.ts";
import { SessionRefError } from "../session/errors.ts";
import { loadSession } from "../session/load.ts";
import { findSession, isFile } from "../session/paths.ts";

/** Options for {@linkcode showAudit}. */
export interface ShowAuditOptions {
  /** The user's tern directory; audit files are in `<ternHome>/audit`. */
  ternHome: string;
  /**
   * A session (id, id prefix or file, as `tern sessions` takes them: every audit log of its
   * runs), or an audit log's name or path; default: the newest audit file.
   */
  session?: string;
  /** The workspace whose sessions an id prefix is looked up in first. */
  cwd?: string;
  /** Print the records as JSON lines instead of a table. */
  json?: boolean;
  /** Receives the output, whole lines with their newline. */
  write: (text: string) => void;
}

/**
 * Prints an audit log and returns the exit code (0).
 * @throws {InputError} when there is no audit file, the session is unknown, or the file is no
 * audit log (it has lines, and none is a record).
 */
export async function showAudit(options: ShowAuditOptions): Promise<number> {
  const paths = options.session === undefined
    ? [await newestAuditFile(options.ternHome)]
    : await sessionFiles(options.ternHome, options.session, options.cwd);
  for (const path of paths) await showFile(path, options);
  return 0;
}

/** Table rows padded together; a long log is printed in blocks of this many. */
const BLOCK_ROWS = 1000;

async function showFile(path: string, options: ShowAuditOptions): Promise<void> {
  // Read twice, a record at a time: a log of any size is shown in bounded memory.
  let count = 0;
  let skipped = 0;
  for await (const record of auditRecords(path)) {
    if (record === undefined) skipped++;
    else count++;
  }
  // Not one record: some other file (`tern audit /etc/passwd`), not a log with damaged lines.
  if (count === 0 && skipped > 0) {
    throw new InputError(
      `Cannot show "${path}": it is not an audit log (none of its ${plural(skipped, "line")} ` +
        `is a tool call's record); give a session, or an audit log from "${
          auditDir(options.ternHome)
        }"`,
    );
  }
  if (options.json) {
    for await (const record of auditRecords(path)) {
      if (record !== undefined) options.write(jsonForTerminal(JSON.stringify(record)) + "\n");
    }
    return;
  }
  options.write(`Audit log "${terminalText(path)}": ${plural(count, "tool call")}\n`);
  const masker = new SecretMasker();
  const deno = new Map<string, Promise<string>>();
  const header = ["TIME", "TOOL", "DECISION", "SANDBOX", "RESULT", "DURATION", "ARGS"];
  let rows = [header];
  const flush = () => {
    for (const line of table(rows)) options.write(line + "\n");
    rows = [];
  };
  // The records hold what the model wrote: every cell is made safe for a terminal, then padded.
  for await (const record of auditRecords(path)) {
    if (record === undefined) continue;
    rows.push((await row(record, masker, deno)).map(safeCell));
    if (rows.length >= BLOCK_ROWS) flush();
  }
  if (rows.length > 0 && count > 0) flush();
  if (skipped > 0) options.write(`${plural(skipped, "malformed line")} skipped\n`);
}

async function row(
  record: AuditRecord,
  masker: SecretMasker,
  deno: Map<string, Promise<string>>,
): Promise<string[]> {
  const by = record.rule ? `${record.decidedBy} "${record.rule}"` : record.decidedBy;
  const reason = record.reason ? `: ${oneLine(masker.mask(record.reason), 60)}` : "";
  // What ran, as the call line of `tern run` shows it: a bidi override or a zero-width space in
  // a command is shown (`⟨U+202E⟩`), not removed, nor left to hide or reorder the text.
  const args = oneLine(visibleText(summarize(masker.maskDeep(record.args))), 80);
  // The calls of one worker run share its file: summed up once.
  const file = record.denoAudit;
  if (file !== undefined && !deno.has(file)) deno.set(file, denoSummary(file));
  const checks = file === undefined ? "" : `  ${await deno.get(file)}`;
  return [
    record.time.replace("T", " ").replace(/\.\d+Z$|Z$/, ""),
    visibleText(record.tool),
    `${record.decision} by ${by}${reason}`,
    `${record.sandbox} ${record.profile}`,
    result(record),
    `${record.durationMs}ms`,
    args + checks,
  ];
}

function result(record: AuditRecord): string {
  const exit = record.exitCode === undefined ? "" : ` exit ${record.exitCode ?? "killed"}`;
  const status = record.status === "SUCCEEDED" ? "ok" : `ERROR[${record.code ?? "?"}]`;
  return status + exit;
}

/** `deno: 4 checks (read 3, env 1)` from the worker run's `DENO_AUDIT_PERMISSIONS` file. */
async function denoSummary(path: string): Promise<string> {
  let entries;
  try {
    entries = await readDenoAudit(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "deno: audit file missing";
    throw error;
  }
  const counts = new Map<string, number>();
  for (const entry of entries) {
    counts.set(entry.permission, (counts.get(entry.permission) ?? 0) + 1);
  }
  const detail = [...counts].map(([name, count]) => `${name} ${count}`).join(", ");
  return `deno: ${plural(entries.length, "permission check")}${detail ? ` (${detail})` : ""}`;
}

/** `path="src/a.ts" limit=20`: an object's fields, or the JSON of anything else. */
function summarize(args: unknown): string {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return JSON.stringify(args) ?? "";
  }
  return Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(" ");
}

function safeCell(text: string): string {
  return terminalText(text).replace(/[\t\n]/g, " ");
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** Pads every column but the last to its widest cell. */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((cells) => cells[i].length)));
  return rows.map((cells) =>
    cells.map((cell, i) => i === cells.length - 1 ? cell : cell.padEnd(widths[i])).join("  ")
      .trimEnd()
  );
}

async function newestAuditFile(ternHome: string): Promise<string> {
  const dir = auditDir(ternHome);
  let newest: { path: string; mtime: number } | undefined;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!isTernLog(entry)) continue;
      const path = join(dir, entry.name);
      const mtime = (await Deno.stat(path)).mtime?.getTime() ?? 0;
      if (!newest || mtime > newest.mtime || (mtime === newest.mtime && path > newest.path)) {
        newest = { path, mtime };
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (!newest) throw new InputError(`No audit log in "${dir}"`);
  return newest.path;
}

/**
 * The audit files `ref` names: an audit log (`<ternHome>/audit/<name>.jsonl`, or a path), else
 * a session as `tern sessions` finds it, whose runs' logs (oldest first) are those whose records
 * name it.
 */
async function sessionFiles(ternHome: string, ref: string, cwd?: string): Promise<string[]> {
  const isPath = ref.includes("/") || ref.endsWith(".jsonl");
  let path: string | undefined;
  if (isPath) {
    path = isAbsolute(ref) ? ref : resolve(ref);
  } else {
    try {
      path = auditPath(ternHome, ref);
    } catch {
      // No audit log's name: perhaps a session's.
    }
  }
  const sessions = join(ternHome, "sessions") + "/";
  if (path !== undefined && !path.startsWith(sessions) && await isFile(path)) return [path];
  let session: string;
  try {
    session = (await loadSession(await findSession(ternHome, ref, cwd))).header.id;
  } catch (error) {
    if (!(error instanceof SessionRefError) || error.matches.length > 1) throw error;
    throw new InputError(
      `Unknown audit session "${ref}": ${path === undefined ? "" : `no file "${path}" and `}` +
        "no session with that id (see tern sessions list)",
    );
  }
  const files = await sessionAuditFiles(ternHome, session);
  if (files.length === 0) {
    throw new InputError(`Session "${session}" has no audit log: it made no tool calls`);
  }
  return files;
}

/** The audit files whose records belong to session `id`, oldest first (by name: run ids). */
async function sessionAuditFiles(ternHome: string, id: string): Promise<string[]> {
  const dir = auditDir(ternHome);
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!isTernLog(entry)) continue;
      const path = join(dir, entry.name);
      if (await namesSession(path, id)) files.push(path);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort();
}

/**
 * Whether a folder entry is one of tern's own audit logs, not the tool worker's Deno permission
 * audit kept beside them (`deno-<run>-worker-<n>.jsonl`, see `runtime.ts`).
 */
function isTernLog(entry: Deno.DirEntry): boolean {
  return entry.isFile && entry.name.endsWith(".jsonl") && !entry.name.startsWith("deno-");
}

/** Whether a record of the audit log at `path` names session `id`; reads up to the first. */
async function namesSession(path: string, id: string): Promise<boolean> {
  for await (const record of auditRecords(path)) {
    if (record?.session === id) return true;
  }
  return false;
}
