/**
 * Where sessions live and how to find them:
 * `<ternHome>/sessions/<encoded cwd>/<timestamp>_<id>.jsonl`, one folder per working directory.
 */
import { visibleText } from "../core/terminal_text.ts";
import { basename, dirname, join, resolve } from "../core/path.ts";
import { SessionFileError, SessionRefError } from "./errors.ts";
import { MAX_TORN_LINES, parseSessionHeader } from "./load.ts";
import { scanLines } from "./_lines.ts";
import { checkRealFolder, pathProblemError, regularFileInfo } from "./regular_file.ts";
import type { SessionHeader } from "./types.ts";

/** What `tern sessions list` shows about one session file. */
export interface SessionInfo {
  id: string;
  path: string;
  /** The working directory from the header. */
  cwd: string;
  /** From the header. */
  created: Date;
  /** The number of entry lines (lines after the header that hold an entry). */
  entries: number;
  /** The first user message in the file, whitespace collapsed, cut to 100 characters. */
  firstUserText?: string;
  /** The file's modification time. */
  modified: Date;
  /** The id of the session this one was forked from. */
  parentId?: string;
  /** A subagent's session: the id of the parent session that spawned it. */
  subagentOf?: string;
}

/** `2026-11-30T03-08-37-123Z_<id>.jsonl`; group 1 is the id. */
const FILE_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_(.+)\.jsonl$/;
const MIN_PREFIX = 4;
/** Lines up to this size are parsed when listing; longer ones are only checked at both ends. */
const PARSE_LIMIT = 64 * 1024;
const decoder = new TextDecoder();

/** The folder holding every session folder: `<ternHome>/sessions`. */
export function sessionsRoot(ternHome: string): string {
  return join(ternHome, "sessions");
}

/**
 * The folder name for a working directory, readable and collision-safe: `cwd` without its
 * leading "/", every character outside `[A-Za-z0-9._-]` replaced by "-", cut to 80 characters,
 * then "-" and the 32-bit FNV-1a hash of the whole `cwd` in 8 hex digits. The hash tells apart
 * paths that read the same ("/a/b" and "/a-b" both start "a-b") and long paths cut alike; it
 * need not be cryptographic (and `node:crypto` would add to the start-up of every run).
 */
export function encodeCwd(cwd: string): string {
  const readable = cwd.replace(/^\//, "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 80);
  const hash = fnv1a(cwd).toString(16).padStart(8, "0");
  return `${readable}-${hash}`;
}

/** `2026-11-30T03-08-37-123Z_<id>.jsonl`: the ISO time with ":" and "." made "-". */
export function sessionFileName(created: Date, id: string): string {
  return `${created.toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`;
}

/** The folder of `cwd`'s sessions. */
export function sessionFolder(ternHome: string, cwd: string): string {
  return join(sessionsRoot(ternHome), encodeCwd(cwd));
}

/** A file named like a session whose header cannot be read (torn, garbage, too damaged). */
export interface UnreadableSession {
  /** The id its file name carries (`<time>_<id>.jsonl`). */
  id: string;
  path: string;
  /** Why it cannot be read, a sentence naming the file. */
  reason: string;
}

/**
 * The sessions under `ternHome` (only `cwd`'s folder when given), newest created first. Files
 * whose first line is not a session header are skipped.
 */
export async function listSessions(
  ternHome: string,
  options: { cwd?: string } = {},
): Promise<SessionInfo[]> {
  return (await listSessionFiles(ternHome, options)).sessions;
}

/**
 * What {@linkcode listSessions} gives, and the files named like sessions it skipped as
 * unreadable, with why (in every folder, since their header cannot say whose they are, when
 * `cwd` is not given; else in `cwd`'s folder). A file gone meanwhile is in neither.
 */
export async function listSessionFiles(
  ternHome: string,
  options: { cwd?: string } = {},
): Promise<{ sessions: SessionInfo[]; unreadable: UnreadableSession[] }> {
  const infos: SessionInfo[] = [];
  const unreadable: UnreadableSession[] = [];
  for (const folder of await sessionFolders(ternHome, options.cwd)) {
    for (const name of await sessionFileNames(folder)) {
      const path = join(folder, name);
      const info = await readSessionInfo(path);
      if (typeof info === "string") {
        unreadable.push({ id: name.match(FILE_NAME)![1], path, reason: info });
        continue;
      }
      // The folder's name carries a 32-bit hash of the path: another path may share it.
      if (info && (options.cwd === undefined || info.cwd === options.cwd)) infos.push(info);
    }
  }
  infos.sort((a, b) => b.created.getTime() - a.created.getTime() || (a.path < b.path ? 1 : -1));
  return { sessions: infos, unreadable };
}

/**
 * The path of the session `ref` names: a path to a .jsonl file, a full id, or an id prefix of
 * at least 4 characters. Ids are looked up in `cwd`'s folder first (a prefix unique there wins),
 * then in every folder. A path must name a regular file, not a link.
 * @throws {SessionRefError} when nothing or more than one session matches, a SessionFileError
 * when the path names a link, a folder, a FIFO or a device.
 */
export async function findSession(ternHome: string, ref: string, cwd?: string): Promise<string> {
  let id = ref.toLowerCase();
  if (ref.endsWith(".jsonl") || ref.includes("/")) {
    const path = resolve(ref);
    if (regularFileInfo(path) !== null) return path;
    const fromName = basename(ref).match(FILE_NAME)?.[1];
    if (ref.includes("/") || !fromName) {
      throw new SessionRefError(`Cannot open session "${ref}": file not found`, ref);
    }
    id = fromName.toLowerCase();
  }
  if (id.length < MIN_PREFIX) {
    throw new SessionRefError(
      `Session reference "${ref}" is too short: give at least ${MIN_PREFIX} characters of the id`,
      ref,
    );
  }
  const searches = cwd === undefined ? [undefined] : [cwd, undefined];
  let matches: { id: string; path: string }[] = [];
  for (const search of searches) {
    matches = [];
    for (const folder of await sessionFolders(ternHome, search)) {
      for (const name of await sessionFileNames(folder)) {
        const fileId = name.match(FILE_NAME)![1];
        if (fileId.toLowerCase() === id) return join(folder, name);
        if (fileId.toLowerCase().startsWith(id)) {
          matches.push({ id: fileId, path: join(folder, name) });
        }
      }
    }
    if (matches.length === 1) return matches[0].path;
    if (matches.length > 1) break;
  }
  if (matches.length === 0) {
    throw new SessionRefError(
      `No session matches "${ref}": run \`tern sessions list\` to see them`,
      ref,
    );
  }
  const list = matches.map((match) => `\n  ${match.id}  ${match.path}`).join("");
  throw new SessionRefError(
    `Session reference "${ref}" is ambiguous: it matches ${matches.length} sessions:${list}`,
    ref,
    { matches: matches.map((match) => match.path) },
  );
}

/**
 * The newest session of `cwd` by the time in its file name whose header names `cwd` (not a
 * subagent's) and that has a line after it, or undefined when there is none. Reads only the
 * first two lines of each.
 */
export async function latestSession(ternHome: string, cwd: string): Promise<string | undefined> {
  const folder = sessionFolder(ternHome, cwd);
  const names = (await sessionFileNames(folder)).reverse();
  for (const name of names) {
    const path = join(folder, name);
    const start = await readStart(path);
    // A subagent's session is its parent's to continue, not the person's; one with a header
    // alone is a run killed before it wrote anything (one that ends removes it): continuing it
    // would leave the conversation before behind.
    const header = start?.header;
    if (header?.cwd === cwd && header.subagentOf === undefined && start!.entries) return path;
  }
  return undefined;
}

/** The folders to search: `cwd`'s (if it exists) or every folder under the sessions root. */
async function sessionFolders(ternHome: string, cwd: string | undefined): Promise<string[]> {
  if (cwd !== undefined) return [sessionFolder(ternHome, cwd)];
  const root = sessionsRoot(ternHome);
  const folders: string[] = [];
  try {
    for await (const entry of Deno.readDir(root)) {
      if (entry.isDirectory) folders.push(join(root, entry.name));
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return folders.sort();
}

/** The names in `folder` shaped like session files, sorted (oldest first); none when no folder. */
async function sessionFileNames(folder: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isFile && FILE_NAME.test(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return names.sort();
}

/**
 * Whether `path` is one of tern's own session files: a regular file, not a link, in a folder
 * directly under `ternHome`'s sessions folder (real paths compared), which is a real folder.
 * Anything else (a file a repository ships, one a person saved elsewhere) is input tern did not
 * write: fork.ts imports only its conversation. Never throws.
 */
export function isOwnSessionFile(ternHome: string, path: string): boolean {
  try {
    if (!Deno.lstatSync(path).isFile) return false;
    // A link at the sessions folder would make tern's own whatever lies where it points.
    if (!Deno.lstatSync(sessionsRoot(ternHome)).isDirectory) return false;
    return dirname(dirname(Deno.realPathSync(path))) ===
      Deno.realPathSync(sessionsRoot(ternHome));
  } catch {
    return false;
  }
}

/**
 * The refusal to continue the session file at `path`, one tern did not write where it keeps its
 * own: a file a repository ships (`.tern/memory/x.jsonl`) or one in a temporary folder could
 * say anything (pins, grants, a plan), and tern would obey all of it.
 */
export function notOwnSessionError(path: string, cause?: unknown): SessionFileError {
  return new SessionFileError(
    `Cannot continue session "${path}": tern continues only its own sessions, in the ` +
      "sessions folder under TERN_HOME; to go on from this file's conversation, import it " +
      `with \`tern sessions fork ${path}\` (the copy keeps the messages, not the settings ` +
      "or permissions)",
    path,
    cause === undefined ? {} : { cause },
  );
}

/**
 * Refuses what {@linkcode isOwnSessionFile} says is not tern's own session file, before anything
 * opens it for appending. @throws {SessionRefError} when nothing is there, a SessionFileError
 * when it is a link or not a regular file or the sessions folder is a link or not a folder,
 * else {@linkcode notOwnSessionError}.
 */
export function checkOwnSessionFile(ternHome: string, path: string): void {
  if (regularFileInfo(path) === null) {
    throw new SessionRefError(`Cannot open session "${path}": file not found`, path);
  }
  try {
    checkRealFolder(sessionsRoot(ternHome));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (!isOwnSessionFile(ternHome, path)) throw notOwnSessionError(path);
}

/**
 * Whether `path` is a regular file (links followed); false when nothing is there.
 * @throws {SessionFileError} when its path cannot name a file (a part is a file, a loop of
 * links, a name too long, no permission), naming it and why.
 */
export async function isFile(path: string, what = "file"): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw pathProblemError(path, error, what);
  }
}

/**
 * The header of the file at `path` and whether a line that is not empty follows it; undefined
 * when it is gone or not a session.
 */
async function readStart(
  path: string,
): Promise<{ header: SessionHeader; entries: boolean } | undefined> {
  let header: SessionHeader | undefined;
  let entries = false;
  try {
    await scanLines(path, (line, lineNumber) => {
      if (lineNumber === 1) header = parseSessionHeader(decoder.decode(line), path);
      else entries = line.length > 0;
      return lineNumber === 1 || !entries;
    }, { chunkSize: 16 * 1024 });
  } catch (error) {
    if (error instanceof SessionFileError || error instanceof Deno.errors.NotFound) {
      return undefined;
    }
    throw error;
  }
  return header && { header, entries };
}

/**
 * Reads what `listSessions` shows: undefined when the file is gone, why it cannot be read when
 * it is not a session. Lines up to PARSE_LIMIT bytes are parsed; a longer line
 * counts as an entry when it starts with "{" and ends with "}" (so a torn long line can,
 * rarely, be counted), and gives the title from its first bytes when it is a user message.
 */
async function readSessionInfo(path: string): Promise<SessionInfo | string | undefined> {
  let header: SessionHeader | undefined;
  let entries = 0;
  let firstUserText: string | undefined;
  let modified: Date;
  let torn = 0;
  let tooTorn = false;
  try {
    modified = (await Deno.lstat(path)).mtime ?? new Date(0);
    await scanLines(path, (line, lineNumber) => {
      if (lineNumber === 1) {
        header = parseSessionHeader(decoder.decode(line), path);
      } else if (line.length <= PARSE_LIMIT) {
        const value = parseLine(line);
        // Every reader refuses such a file (`MAX_TORN_LINES`): it is not listed either.
        if (value === null && ++torn > MAX_TORN_LINES) {
          header = undefined;
          tooTorn = true;
          return false;
        }
        if (value && typeof value.id === "string" && typeof value.timestamp === "string") {
          entries++;
          firstUserText ??= userText(value);
        }
      } else if (line[0] === 0x7b && line[line.length - 1] === 0x7d) {
        entries++;
        // Only the title's start is wanted: read from the line's start, never parsed whole.
        firstUserText ??= longUserText(line);
      }
    });
  } catch (error) {
    if (error instanceof SessionFileError) return error.message;
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  if (!header) {
    return tooTorn
      ? `Cannot load session "${path}": more than ${MAX_TORN_LINES} of its lines are damaged`
      : `Cannot load session "${path}": the file is empty`;
  }
  const info: SessionInfo = {
    id: header.id,
    path,
    cwd: header.cwd,
    created: new Date(header.created),
    entries,
    modified,
  };
  if (firstUserText !== undefined) info.firstUserText = firstUserText;
  if (header.parent) info.parentId = header.parent.id;
  if (header.subagentOf) info.subagentOf = header.subagentOf.sessionId;
  return info;
}

/** The line's JSON object; undefined when it holds none, null when it is not complete JSON. */
function parseLine(bytes: Uint8Array): Record<string, unknown> | undefined | null {
  if (bytes.length === 0) return undefined;
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return typeof value === "object" && value !== null
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return null;
  }
}

/**
 * A user message entry's text as `userText` gives it, from the first 64 KiB of a line too long
 * to parse (tern writes an entry's keys in this order); undefined when it is not one.
 */
function longUserText(line: Uint8Array): string | undefined {
  const head = decoder.decode(line.subarray(0, 64 * 1024));
  const found = LONG_USER_MESSAGE.exec(head);
  if (found === null) return undefined;
  // Cut where the head ends: an escape left open there is dropped.
  const text = found[1].slice(0, 4000).replace(/\\(u[0-9a-fA-F]{0,3})?$/, "");
  try {
    return userText({
      type: "message",
      message: { role: "user", content: JSON.parse(`"${text}"`) },
    });
  } catch {
    return undefined;
  }
}

const LONG_USER_MESSAGE =
  /^\{"type":"message","id":"[^"]*","parentId":(?:null|"[^"]*"),"timestamp":"[^"]*","message":\{"role":"user","content":"((?:[^"\\]|\\.)*)/;

/** The text of a user message entry, whitespace collapsed and cut to 100 characters. */
function userText(entry: Record<string, unknown>): string | undefined {
  if (entry.type !== "message") return undefined;
  const message = entry.message as { role?: unknown; content?: unknown } | undefined;
  if (message?.role !== "user" || typeof message.content !== "string") return undefined;
  // A title for lists: a run of blank glyphs would wrap a row of its own (a fake session).
  const text = visibleText(message.content.slice(0, 1000).replace(/\s+/g, " ").trim());
  return Array.from(text).slice(0, 100).join("");
}

/** 32-bit FNV-1a over the UTF-8 bytes of `text`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
