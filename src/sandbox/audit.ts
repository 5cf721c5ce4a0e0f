/**
 * Tern's own audit log: one JSON line per tool call in `<TERN_HOME>/audit/<session>.jsonl`,
 * saying what ran, who allowed it, how it was confined and how it ended. Worker runs point at
 * the file Deno writes with `DENO_AUDIT_PERMISSIONS`.
 */
import { TernError } from "../core/errors.ts";
import { dirname, join } from "../core/path.ts";
import { lstatOrNull, sameFile } from "../core/verified_open.ts";
import { SecretMasker } from "./secrets.ts";

/** A string in a record's arguments longer than this (a file's content) keeps only its start. */
export const AUDIT_STRING_CHARS = 4096;
/** Arguments whose JSON is still longer than this keep only the start of that JSON. */
export const AUDIT_ARGS_CHARS = 256 * 1024;
/** A line longer than this is no record (see `AUDIT_ARGS_CHARS`) and is skipped unread. */
export const AUDIT_LINE_BYTES = 4 * 1024 * 1024;

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
  /** Masks every field once more before writing (default: key formats only). */
  masker?: SecretMasker;
}

/** Records held in memory while the audit log cannot be written; older ones beyond are lost. */
export const AUDIT_PENDING_RECORDS = 1000;

/**
 * An append-only audit file. Each record is one `write` of one line to a file opened with
 * `O_APPEND`, so concurrent writers never interleave within a line; appends are also queued.
 * A line that cannot be written (a full disk) is held, with the lines after it, and written
 * first when a later append or {@linkcode AuditLog.ready} finds the file writable again.
 */
export class AuditLog {
  readonly path: string;
  readonly #file: Deno.FsFile;
  readonly #masker: SecretMasker;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  /** Why the last write failed, while lines are held. */
  #failure: string | undefined;
  #held: string[] = [];
  #lost = 0;

  private constructor(path: string, file: Deno.FsFile, masker: SecretMasker) {
    this.path = path;
    this.#file = file;
    this.#masker = masker;
  }

  /**
   * Opens (or creates, mode 0600) the audit file at `path`; a missing directory is created with
   * mode 0700. Neither is used through a symbolic link: a link there could lead tern's lines
   * (which quote the model) into a file that runs code, such as a shell's start-up file.
   * @throws {TernError} when the file or its folder is a link or not a regular file or folder.
   */
  static async open(path: string, options: AuditLogOptions = {}): Promise<AuditLog> {
    const dir = dirname(path);
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const folder = lstatOrNull(dir);
    if (folder !== null && !folder.isDirectory) throw notRegular(dir, folder, "folder");
    const file = await openRegular(path);
    const log = new AuditLog(path, file, options.masker ?? new SecretMasker());
    // A line a killed writer left unfinished gets its line break first, so the next record
    // starts a line of its own instead of being lost with the torn one.
    log.#torn = await endsTorn(file);
    return log;
  }

  #torn = false;

  /**
   * Appends `record` as one line, with every string in it masked again; long strings in `args`
   * keep their start only ({@linkcode AUDIT_STRING_CHARS}).
   * @throws {Error} (the promise) when the line could not be written now: it is held and
   * written with the next append or `ready()` that finds the file writable.
   */
  append(record: AuditRecord): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new Error(`Cannot append to audit log "${this.path}": closed`));
    }
    // Every field, not only the arguments: a call id, a rule, a URL or a path may be the model's.
    const all = this.#masker.maskDeep(record) as AuditRecord;
    const masked: AuditRecord = { ...all, args: shortArgs(all.args) };
    const line = JSON.stringify(masked) + "\n";
    const write = this.#queue.then(() => {
      this.#hold(line);
      return this.#flush();
    });
    this.#queue = write.catch(() => {});
    return write;
  }

  /**
   * Undefined when every record so far is written: at once, without touching the file, unless
   * a write failed; then the held lines are written again, and the reason they still cannot
   * be (`No space left on device (os error 28)`) is returned. Never throws.
   */
  async ready(): Promise<string | undefined> {
    await this.#queue;
    if (this.#failure === undefined || this.#closed) return this.#failure;
    const retry = this.#queue.then(() => this.#flush());
    this.#queue = retry.catch(() => {});
    await this.#queue;
    return this.#failure;
  }

  /** Records not on disk: those held, and those dropped beyond {@linkcode AUDIT_PENDING_RECORDS}. */
  get unwritten(): number {
    return this.#held.length + this.#lost;
  }

  #hold(line: string): void {
    this.#held.push(line);
    if (this.#held.length > AUDIT_PENDING_RECORDS) {
      this.#held.shift();
      this.#lost++;
    }
  }

  /** Writes the held lines in order, one write each, dropping each once it is whole on disk. */
  async #flush(): Promise<void> {
    while (this.#held.length > 0) {
      const line = this.#held[0];
      const bytes = new TextEncoder().encode(this.#torn ? "\n" + line : line);
      try {
        await writeAll(this.#file, bytes);
      } catch (error) {
        // Part of the line may be written (a full disk): the next one starts on a new line.
        this.#torn = true;
        this.#failure = error instanceof Error ? error.message : String(error);
        throw error;
      }
      this.#torn = false;
      this.#held.shift();
    }
    this.#failure = undefined;
  }

  /**
   * Waits for pending appends, tries once more to write held lines and closes the file.
   * Calling it twice does nothing.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.ready();
    this.#closed = true;
    this.#file.close();
  }
}

/**
 * Opens `path` to append without following a link: an existing file must be a regular file
 * and stay the one checked; a missing one is created with `O_EXCL`, which follows no link.
 */
async function openRegular(path: string): Promise<Deno.FsFile> {
  for (let attempt = 0;; attempt++) {
    const before = lstatOrNull(path);
    if (before !== null && !before.isFile) throw notRegular(path, before, "file");
    try {
      const file = await Deno.open(
        path,
        before === null
          ? { read: true, append: true, createNew: true, mode: 0o600 }
          : { read: true, append: true },
      );
      if (before === null || sameFile(before, await file.stat())) return file;
      file.close();
    } catch (error) {
      // Another writer created it first: check what it made.
      if (!(error instanceof Deno.errors.AlreadyExists) || attempt > 0) throw error;
      continue;
    }
    throw new TernError(
      `Cannot open the audit log "${path}": it was replaced while it was opened`,
    );
  }
}

function notRegular(path: string, info: Deno.FileInfo, what: "file" | "folder"): TernError {
  const is = info.isSymlink ? "a symbolic link" : info.isDirectory ? "a folder" : "no regular file";
  return new TernError(
    `Cannot open the audit log ${what} "${path}": it is ${is}, and tern writes its audit log ` +
      `only to a real ${what} (a link could lead its lines into ` +
      "another file); remove it and run tern again",
  );
}

/** Whether the file has bytes and its last one is no line break. */
async function endsTorn(file: Deno.FsFile): Promise<boolean> {
  const size = (await file.stat()).size;
  if (size === 0) return false;
  // Appending writes at the end whatever the position: reading the last byte moves nothing.
  await file.seek(size - 1, Deno.SeekMode.Start);
  const last = new Uint8Array(1);
  return (await file.read(last)) === 1 && last[0] !== 0x0a;
}

/** `args` with long strings cut (see {@linkcode AUDIT_STRING_CHARS}), and then if still long, its JSON. */
function shortArgs(args: unknown): unknown {
  const cut = cutStrings(args, 0);
  const json = JSON.stringify(cut) ?? "";
  if (json.length <= AUDIT_ARGS_CHARS) return cut;
  return { truncated: `${json.slice(0, AUDIT_STRING_CHARS)}… [${json.length} characters]` };
}

function cutStrings(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length <= AUDIT_STRING_CHARS
      ? value
      : `${value.slice(0, AUDIT_STRING_CHARS)}… [${value.length} characters]`;
  }
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, cutStrings(item, depth + 1)]),
  );
}

/** One write for a whole line; a short write (rare for regular files) continues where it ended. */
async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/**
 * The records of an audit file, in order. Lines that are not a version-1 record (a torn last
 * line after a crash, a hand edit, a line over {@linkcode AUDIT_LINE_BYTES}) are counted in
 * `skipped`. Holds every record: {@linkcode auditRecords} reads a large file record by record.
 * @throws {Deno.errors.NotFound} when the file does not exist.
 */
export async function readAudit(
  path: string,
): Promise<{ records: AuditRecord[]; skipped: number }> {
  const records: AuditRecord[] = [];
  let skipped = 0;
  for await (const record of auditRecords(path)) {
    if (record === undefined) skipped++;
    else records.push(record);
  }
  return { records, skipped };
}

/**
 * The records of an audit file, in order, read a piece at a time: undefined for each line that
 * is no version-1 record. Memory stays within a line's limit whatever the file's size.
 * @throws {Deno.errors.NotFound} when the file does not exist.
 */
export async function* auditRecords(path: string): AsyncGenerator<AuditRecord | undefined> {
  for await (const line of fileLines(path)) {
    const value = line === undefined ? undefined : parseLine(line);
    yield isRecord(value) ? value : undefined;
  }
}

/**
 * The entries of a Deno `DENO_AUDIT_PERMISSIONS` file; malformed lines are left out.
 * @throws {Deno.errors.NotFound} when the file does not exist (Deno creates it when it starts).
 */
export async function readDenoAudit(path: string): Promise<DenoAuditEntry[]> {
  const entries: DenoAuditEntry[] = [];
  for await (const line of fileLines(path)) {
    const value = line === undefined ? undefined : parseLine(line);
    if (isDenoEntry(value)) entries.push(value);
  }
  return entries;
}

/**
 * The non-blank lines of a file, streamed; undefined for a line over `AUDIT_LINE_BYTES`, which
 * is passed over without being kept.
 */
async function* fileLines(path: string): AsyncGenerator<string | undefined> {
  using file = await Deno.open(path);
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(64 * 1024);
  let parts: Uint8Array[] = [];
  let size = 0;
  let tooLong = false;
  const end = (): string | undefined => {
    const whole = tooLong ? undefined : decoder.decode(concat(parts, size));
    parts = [];
    size = 0;
    tooLong = false;
    return whole;
  };
  for (;;) {
    const read = await file.read(buffer);
    if (read === null) break;
    let from = 0;
    while (from < read) {
      const at = buffer.subarray(from, read).indexOf(0x0a);
      const to = at === -1 ? read : from + at;
      if (!tooLong) {
        if (size + to - from > AUDIT_LINE_BYTES) {
          tooLong = true;
          parts = [];
        } else parts.push(buffer.slice(from, to));
        size += to - from;
      }
      if (at === -1) break;
      const line = end();
      if (line === undefined || line.trim() !== "") yield line;
      from = to + 1;
    }
  }
  if (size > 0 || tooLong) {
    const line = end();
    if (line === undefined || line.trim() !== "") yield line;
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const whole = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
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
