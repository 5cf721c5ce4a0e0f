/**
 * Opening the files tern keeps in its sessions folder (session files, their checkpoint logs,
 * saved tool results) only when each is a regular file, never through a symbolic link: a link
 * there would make tern append a session it continues to a file anywhere, and a FIFO or a device
 * would make a read wait forever. The check is `lstat`, then the open, then `fstat`: the file
 * opened must be the one checked (device and inode), so a link swapped in between is refused.
 * `Deno.open` has no `O_NOFOLLOW` and the session writer needs its `flock` (which `node:fs`
 * lacks), hence the check around it; a FIFO swapped in within that instant still blocks the
 * open, which only someone who can already write tern's 0700 folders could do.
 */
import { dirname, join, relative } from "../core/path.ts";
import { lstatOrNull, sameFile } from "../core/verified_open.ts";
import { SessionFileError } from "./errors.ts";

/** How a caller names the file in messages: "session", "checkpoint log". */
export interface RegularFileOptions {
  /** What the file is, for messages (default "session"). */
  what?: string;
}

/**
 * The `lstat` of `path` when it is a regular file; null when nothing is there.
 * @throws {SessionFileError} when it is a link, a folder, a FIFO, a socket or a device, or its
 * path cannot name a file ({@linkcode pathProblemError}: a part is a file, a loop of links, a
 * name too long, no permission).
 */
export function regularFileInfo(
  path: string,
  options: RegularFileOptions = {},
): Deno.FileInfo | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw pathProblemError(path, error, options.what);
  }
  if (!info.isFile) throw notRegularError(path, info, options.what);
  return info;
}

/**
 * `Deno.openSync(path, options)` for a regular file that is no link (see the module notes).
 * With `create`, a missing file is created with `O_EXCL`, which follows no link either.
 * @throws {SessionFileError} when `path` is not a regular file or changed while being opened;
 * `Deno.errors.NotFound` when nothing is there (and `create` is not set); what `Deno.openSync`
 * throws.
 */
export function openRegularFileSync(
  path: string,
  options: Deno.OpenOptions & RegularFileOptions,
): Deno.FsFile {
  const { what, ...open } = options;
  for (let attempt = 0;; attempt++) {
    const info = regularFileInfo(path, { what });
    if (info === null) {
      if (!open.create && !open.createNew) throw notFound(path, what);
      try {
        return Deno.openSync(path, { ...open, create: false, createNew: true });
      } catch (error) {
        // Created by someone else meanwhile: check that one.
        if (error instanceof Deno.errors.AlreadyExists && attempt === 0) continue;
        throw error;
      }
    }
    return checkedOpen(Deno.openSync(path, open), info, path, what);
  }
}

/** {@linkcode openRegularFileSync} without blocking the event loop on the open. */
export async function openRegularFile(
  path: string,
  options: Deno.OpenOptions & RegularFileOptions,
): Promise<Deno.FsFile> {
  const { what, ...open } = options;
  if (open.create || open.createNew) return openRegularFileSync(path, options);
  const info = regularFileInfo(path, { what });
  if (info === null) throw notFound(path, what);
  return checkedOpen(await Deno.open(path, open), info, path, what);
}

/**
 * `file`, opened at `path`, when it is the file `info` described (confirmSame); closed, and the
 * error thrown, when it is not. The fstat is sync: it costs far less than an async operation's
 * hand-off to another thread.
 */
function checkedOpen(
  file: Deno.FsFile,
  info: Deno.FileInfo,
  path: string,
  what: string | undefined,
): Deno.FsFile {
  try {
    confirmSame(file.statSync(), info, path, what);
  } catch (error) {
    file.close();
    throw error;
  }
  return file;
}

/**
 * Makes folder `folder` (0700) and every folder from `base` (made with its parents) to it, one
 * at a time, checking each, `base` included, is a real folder and not a link before going into
 * it: nothing is ever made through a link. Each of them that others could read is made 0700.
 * (The folders above `base`, TERN_HOME among them, may be links: the person chose where they
 * point.) Returns the folders it made, outermost first ({@linkcode removeEmptyFolders}).
 * @throws {SessionFileError} when one is a link or not a folder; what `Deno.mkdirSync` throws.
 */
export function makeRealFolder(
  folder: string,
  base: string,
  options: RegularFileOptions = {},
): string[] {
  const steps = relative(base, folder).split("/").filter((step) => step !== "" && step !== ".");
  if (steps.includes("..")) {
    throw new TypeError(`makeRealFolder() needs "${folder}" under "${base}"`);
  }
  // The folders made, outermost first: `base` and those above it that were not there.
  const made: string[] = [];
  for (let up = base; lstatOrNull(up) === null && up !== dirname(up); up = dirname(up)) {
    made.unshift(up);
  }
  try {
    Deno.mkdirSync(base, { recursive: true, mode: 0o700 });
  } catch (error) {
    // Something else stands at `base` (a link to nothing, a file): said below, by what it is.
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    made.length = 0;
  }
  checkRealFolder(base, options);
  ownOnly(base);
  let at = base;
  for (const step of steps) {
    at = join(at, step);
    try {
      Deno.mkdirSync(at, { mode: 0o700 });
      made.push(at);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    checkRealFolder(at, options);
    ownOnly(at);
  }
  return made;
}

/**
 * Removes `folders` (from {@linkcode makeRealFolder}), innermost first, each only while empty:
 * what a start that wrote nothing made. Never throws.
 */
export function removeEmptyFolders(folders: readonly string[]): void {
  for (const folder of [...folders].reverse()) {
    try {
      Deno.removeSync(folder);
    } catch {
      return;
    }
  }
}

/**
 * Makes the real folder at `path` 0700 when others may read or enter it and it is the
 * person's own: one made before with a looser mode (an older tern, a `mkdir` by hand) would
 * let other users of the machine read what tern keeps there that is not 0600 (the rewind
 * store's copies of workspace files). Never throws: a folder it cannot change stays as it is.
 */
function ownOnly(path: string): void {
  try {
    const info = Deno.lstatSync(path);
    if (!info.isDirectory || info.mode === null || (info.mode & 0o077) === 0) return;
    if (info.uid !== Deno.uid()) return;
    Deno.chmodSync(path, 0o700);
  } catch {
    // Another user's folder, or one gone meanwhile: left as it is.
  }
}

/**
 * Refuses `path` unless it is a real folder (not a link to one). Nothing there is left to the
 * caller (`Deno.errors.NotFound`).
 * @throws {SessionFileError} naming the path, what stands there and what to do.
 */
export function checkRealFolder(path: string, options: RegularFileOptions = {}): void {
  const info = Deno.lstatSync(path);
  if (info.isDirectory) return;
  throw new SessionFileError(
    `Cannot use the ${options.what ?? "session"} folder "${path}": it is ${kindOf(info)}, ` +
      "not a folder: tern keeps its session files only in real folders under TERN_HOME " +
      "(a link there could lead its writes to where commands may write); " +
      (info.isSymlink
        ? "put the folder itself there (move what the link points to in its place), or remove " +
          "the link, and run the command again"
        : "remove it and run the command again"),
    path,
  );
}

/** What a file that is not a regular file is, for messages. */
function kindOf(info: Deno.FileInfo): string {
  if (info.isFile) return "a file";
  if (info.isSymlink) return "a symbolic link";
  if (info.isDirectory) return "a folder";
  if (info.isFifo) return "a FIFO";
  if (info.isSocket) return "a socket";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  return "a special file";
}

function notRegularError(path: string, info: Deno.FileInfo, what = "session"): SessionFileError {
  return new SessionFileError(
    `Cannot open ${what} "${path}": it is ${kindOf(info)}, not a regular file: tern opens ` +
      "session files only as regular files, never through a link; " +
      (info.isSymlink
        ? "remove the link, or give the path of the file itself"
        : "give the path of a session's .jsonl file (see tern sessions list)"),
    path,
  );
}

/**
 * The SessionFileError for a path (one a person typed, often) the file system refused to look up
 * for another reason than nothing being there: it names the path and the reason, so it ends the
 * command as bad input instead of an internal error.
 */
export function pathProblemError(
  path: string,
  error: unknown,
  what = "session",
): SessionFileError {
  return new SessionFileError(`Cannot open ${what} "${path}": ${pathProblem(error)}`, path, {
    cause: error,
  });
}

/** Why the file system refused a path, in words: `error`'s without the OS's details. */
export function pathProblem(error: unknown): string {
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of its path is not a folder";
  }
  if (error instanceof Deno.errors.FilesystemLoop) {
    return "its path goes through a loop of symbolic links";
  }
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  const text = error instanceof Error ? error.message : String(error);
  // "File name too long (os error 36): stat '…'": the path is named by the caller.
  const reason = text.replace(/ \(os error \d+\)[\s\S]*$/, "").trim();
  return reason === "" ? "it cannot be read" : reason[0].toLowerCase() + reason.slice(1);
}

function notFound(path: string, what = "session"): Deno.errors.NotFound {
  return new Deno.errors.NotFound(`Cannot open ${what} "${path}": file not found`);
}

/** Throws unless the opened file (`opened`) is the one `lstat` saw (`checked`). */
function confirmSame(
  opened: Deno.FileInfo,
  checked: Deno.FileInfo,
  path: string,
  what = "session",
): void {
  if (opened.isFile && sameFile(opened, checked)) return;
  throw new SessionFileError(
    `Cannot open ${what} "${path}": it changed while being opened (a link or another file ` +
      "was put in its place); run the command again",
    path,
  );
}
