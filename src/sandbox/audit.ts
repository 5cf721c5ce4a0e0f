/**
 * Tern's own audit log: one JSON line per tool call in `<TERN_HOME>/audit/<session>.jsonl`,
 * saying what ran, who allowed it, how it was confined and how it ended. Worker runs point at
 * the file Deno writes with `DENO_AUDIT_PERMISSIONS`.
 */
import { dirname, join } from "../core/path.ts";
import { SecretMasker } from "./secrets.ts";

/** One tool call. Version 1 of the format; a reader skips lines of other versions. */
export interface AuditRecord {
  v: 1;
  /** When the call ended, ISO 8601. */
  time: string;
  session?: string;
  callId: string;
  tool: string;
  /** The call's arguments, secrets masked. */
  args: unknown;
  /** The sandbox profile, e.g. `:workspace`. */
  profile: string;
  mode: "ask" | "auto" | "bypass";
  decision: "allow" | "deny";
  decidedBy:
    | "rule"
    | "person"
    | "reviewer"
    | "bypass"
    | "policy"
    | "profile"
    | "classifier"
    | "session"
    | "hook";
  /** The rule that decided, when one did. */
  rule?: string;
  /** Why (the reviewer's or person's reason, a policy message). Masked. */
  reason?: string;
  /**
   * Where the call ran: the tool worker, bubblewrap, unconfined (`none`), tern's process
   * (`in-process`: a worker tool without a worker), or the host (`host`: an MCP server;
   * records written before tools declared where they run say `mcp`).
   */
  sandbox: "worker" | "bwrap" | "none" | "in-process" | "host" | "mcp";
  status: "SUCCEEDED" | "ERROR";
  /** The observation's error code when `status` is `ERROR`. */
  code?: string;
  /** A shell command's exit code (null when it was killed). */
  exitCode?: number | null;
  durationMs: number;
  /** Path of the `DENO_AUDIT_PERMISSIONS` file of the worker run that served this call. */
  denoAudit?: string;
  /**
   * The hosts (`host:port`) the filtering proxy connected a shell command with host grants to,
   * and those it refused; absent for commands without host grants.
   */
  net?: { connected: string[]; refused: string[] };
  /** What a web tool's call asked to reach (`GET <url>`, a search and its provider). */
  network?: string;
  /** What a web fetch got: the last URL (after redirects), status, bytes and time. */
  web?: { url: string; status: number; bytes: number; ms: number };
  /** Workspace files that run code on the host later which the call created or changed. */
  hostFiles?: Array<{ path: string; change: "created" | "changed" | "removed"; runs: string }>;
  /** The paths the call named, as its tool declares them (`write`: it may change them). */
  paths?: Array<{ path: string; write: boolean }>;
}

/**
 * One line of Deno's `DENO_AUDIT_PERMISSIONS` file (Deno 2.9.6): a permission *check*, made
 * whether it was granted or not (Deno records no allow/deny field). `value` is the path, host,
 * variable or sys call checked, or null for a check of the whole permission (`Deno.env.toObject()`).
 * `stack` is present only when `DENO_TRACE_PERMISSIONS` is set.
 */
export interface DenoAuditEntry {
  v: number;
  /** ISO 8601 to the second, UTC (`2026-11-30T02:26:23Z`). */
  datetime: string;
  /** `read`, `write`, `net`, `env`, `sys`, `run`, `ffi` or `import`. */
  permission: string;
  value: string | null;
  stack?: string[];
}

/** The audit directory: `<ternHome>/audit`. */
export function auditDir(ternHome: string): string {
  return join(ternHome, "audit");
}

/**
 * The audit file of session (or run) `id`: `<ternHome>/audit/<id>.jsonl`.
 * @throws {TypeError} when `id` is empty or could name another directory.
 */
export function auditPath(ternHome: string, id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) {
    throw new TypeError(`Invalid audit session id "${id}": use letters, digits, ".", "_" or "-"`);
  }
  return join(auditDir(ternHome), `${id}.jsonl`);
}

/** Options for {@linkcode AuditLog.open}. */
export interface AuditLogOptions {
  /** Masks arguments and reasons once more before writing (default: key formats only). */
  masker?: SecretMasker;
}

/**
 * An append-only audit file. Each record is one `write` of one line to a file opened with
 * `O_APPEND`, so concurrent writers never interleave within a line; appends are also queued.
 */
export class AuditLog {
  readonly path: string;
  readonly #file: Deno.FsFile;
  readonly #masker: SecretMasker;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(path: string, file: Deno.FsFile, masker: SecretMasker) {
    this.path = path;
    this.#file = file;
    this.#masker = masker;
  }

  /**
   * Opens (or creates, mode 0600) the audit file at `path`; a missing directory is created with
   * mode 0700.
   */
  static async open(path: string, options: AuditLogOptions = {}): Promise<AuditLog> {
    await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
    return new AuditLog(path, file, options.masker ?? new SecretMasker());
  }

  /** Appends `record` as one line, with `args` and `reason` masked again. */
  append(record: AuditRecord): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new Error(`Cannot append to audit log "${this.path}": closed`));
    }
    const masked: AuditRecord = { ...record, args: this.#masker.maskDeep(record.args) };
    if (record.reason !== undefined) masked.reason = this.#masker.mask(record.reason);
    const bytes = new TextEncoder().encode(JSON.stringify(masked) + "\n");
    const write = this.#queue.then(() => writeAll(this.#file, bytes));
    this.#queue = write.catch(() => {});
    return write;
  }

  /** Waits for pending appends and closes the file. Calling it twice does nothing. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    this.#file.close();
  }
}

/** One write for a whole line; a short write (rare for regular files) continues where it ended. */
async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/**
 * The records of an audit file, in order. Lines that are not a version-1 record (a torn last
 * line after a crash, a hand edit) are counted in `skipped`.
 * @throws {Deno.errors.NotFound} when the file does not exist.
 */
export async function readAudit(
  path: string,
): Promise<{ records: AuditRecord[]; skipped: number }> {
  const records: AuditRecord[] = [];
  let skipped = 0;
  for (const line of lines(await Deno.readTextFile(path))) {
    const value = parseLine(line);
    if (isRecord(value)) records.push(value);
    else skipped++;
  }
  return { records, skipped };
}

/**
 * The entries of a Deno `DENO_AUDIT_PERMISSIONS` file; malformed lines are left out.
 * @throws {Deno.errors.NotFound} when the file does not exist (Deno creates it when it starts).
 */
export async function readDenoAudit(path: string): Promise<DenoAuditEntry[]> {
  const entries: DenoAuditEntry[] = [];
  for (const line of lines(await Deno.readTextFile(path))) {
    const value = parseLine(line);
    if (isDenoEntry(value)) entries.push(value);
  }
  return entries;
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRecord(value: unknown): value is AuditRecord {
  return isObject(value) && value.v === 1 && typeof value.time === "string" &&
    typeof value.callId === "string" && typeof value.tool === "string" &&
    typeof value.decision === "string" && typeof value.status === "string" &&
    typeof value.durationMs === "number";
}

function isDenoEntry(value: unknown): value is DenoAuditEntry {
  return isObject(value) && typeof value.permission === "string" &&
    typeof value.datetime === "string" && (value.value === null || typeof value.value === "string");
}
