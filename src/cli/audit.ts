/** `tern audit [session]`: the audit log of one session, a line per tool call, or as JSONL. */
import { isAbsolute, join, resolve } from "../core/path.ts";
import { InputError } from "./errors.ts";
import { jsonForTerminal, terminalText } from "../core/terminal_text.ts";
import {
  auditDir,
  auditPath,
  type AuditRecord,
  readAudit,
  readDenoAudit,
} from "../sandbox/audit.ts";
import { SecretMasker } from "../sandbox/secrets.ts";

/** Options for {@linkcode showAudit}. */
export interface ShowAuditOptions {
  /** The user's tern directory; audit files are in `<ternHome>/audit`. */
  ternHome: string;
  /** A session id or the path of an audit file; default: the newest audit file. */
  session?: string;
  /** Print the records as JSON lines instead of a table. */
  json?: boolean;
  /** Receives the output, whole lines with their newline. */
  write: (text: string) => void;
}

/**
 * Prints an audit log and returns the exit code (0).
 * @throws {InputError} when there is no audit file or the session is unknown.
 */
export async function showAudit(options: ShowAuditOptions): Promise<number> {
  const path = options.session === undefined
    ? await newestAuditFile(options.ternHome)
    : await sessionFile(options.ternHome, options.session);
  const { records, skipped } = await readAudit(path);
  if (options.json) {
    for (const record of records) options.write(jsonForTerminal(JSON.stringify(record)) + "\n");
    return 0;
  }
  options.write(`Audit log "${terminalText(path)}": ${plural(records.length, "tool call")}\n`);
  const masker = new SecretMasker();
  const rows = [["TIME", "TOOL", "DECISION", "SANDBOX", "RESULT", "DURATION", "ARGS"]];
  // The records hold what the model wrote: every cell is made safe for a terminal, then padded.
  for (const record of records) rows.push((await row(record, masker)).map(safeCell));
  if (records.length > 0) {
    for (const line of table(rows)) options.write(line + "\n");
  }
  if (skipped > 0) options.write(`${plural(skipped, "malformed line")} skipped\n`);
  return 0;
}

async function row(record: AuditRecord, masker: SecretMasker): Promise<string[]> {
  const by = record.rule ? `${record.decidedBy} "${record.rule}"` : record.decidedBy;
  const reason = record.reason ? `: ${oneLine(masker.mask(record.reason), 60)}` : "";
  const args = oneLine(summarize(masker.maskDeep(record.args)), 80);
  const deno = record.denoAudit ? `  ${await denoSummary(record.denoAudit)}` : "";
  return [
    record.time.replace("T", " ").replace(/\.\d+Z$|Z$/, ""),
    record.tool,
    `${record.decision} by ${by}${reason}`,
    `${record.sandbox} ${record.profile}`,
    result(record),
    `${record.durationMs}ms`,
    args + deno,
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
      if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue;
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

/** A session id (`<ternHome>/audit/<id>.jsonl`) or, when it has a slash or ends in .jsonl, a path. */
async function sessionFile(ternHome: string, session: string): Promise<string> {
  const isPath = session.includes("/") || session.endsWith(".jsonl");
  let path: string;
  if (isPath) {
    path = isAbsolute(session) ? session : resolve(session);
  } else {
    try {
      path = auditPath(ternHome, session);
    } catch {
      throw new InputError(`Unknown audit session "${session}"`);
    }
  }
  try {
    if ((await Deno.stat(path)).isFile) return path;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  throw new InputError(`Unknown audit session "${session}": no file "${path}"`);
}
