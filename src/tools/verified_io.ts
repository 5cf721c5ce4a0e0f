/**
 * Opening and writing what `paths.ts` checked without being tricked by a swap in between: the
 * one place the file tools touch file contents.
 *
 * What is guaranteed. Deno 2.9.6 offers no `openat`, and drops `O_NOFOLLOW` whenever
 * permission checks are active, so a path is necessarily resolved again when it is opened. The
 * helpers therefore verify after the fact, before any byte is read or written, with
 * synchronous system calls run back to back (through `node:fs`, which gives descriptors and
 * `O_NONBLOCK`), so the window for a swap is microseconds, not an event-loop turn:
 *
 * - {@linkcode openVerified} opens the checked real path (non-blocking, so a FIFO swapped in
 *   cannot hang the call), then requires `fstat` of the descriptor to show the device and inode
 *   that `lstat` showed at the check, and the path to still be its own real path naming that
 *   inode. A symlink or another file swapped in at the file or at any parent folder between
 *   check and open yields a different inode, or a different real path, and is refused.
 * - {@linkcode writeFileVerified} never writes through an existing file: it creates a new
 *   temporary file (`O_CREAT | O_EXCL`, which never follows a symlink) in the checked folder,
 *   confirms that file is in that folder (same folder inode, symlink-free path) before writing
 *   the content, renames it over the target (the target entry is replaced, whatever it has
 *   become: a symlink or hard link swapped in is replaced, not followed) and confirms the
 *   result is where it was meant to be. A writer killed mid-write (SIGKILL) leaves its
 *   temporary file behind; the first write of a process into that folder removes such files
 *   once they are a minute old (see `sweepLeftTemps`).
 *
 * What is not: swaps timed to the microsecond. A read escapes only if a parent folder is a
 * symlink to outside at the check's `lstat` and at the open, is a real folder again for the
 * confirming `realpath`, and a symlink again for the confirming `lstat` right after it. A write
 * can leave an empty temporary file in another folder the tool may write to (swap in between
 * the folder check and the create, swap back before the confirmation), or put its content
 * there when the swap lands inside the `rename` call, between its two path lookups (which
 * takes a one-call exchange such as `renameat2(RENAME_EXCHANGE)`); the confirmation after the
 * rename then reports the change but cannot undo it. Measured: a `renameat2(RENAME_EXCHANGE)`
 * loop gets `list`, `glob` and `grep` results from outside within seconds. So where bubblewrap
 * runs, the worker runs in a view holding only the workspace, the granted folders and what
 * Deno needs (src/sandbox/worker/view.ts): a race then reaches nothing outside, and these
 * checks are the second layer. Without bubblewrap they are the only one.
 */
import * as fs from "node:fs";
import { basename, dirname, join } from "../core/path.ts";
import {
  changed,
  confirmAt,
  confirmDirectory,
  lstatOrNull,
  openError,
  openVerified,
  sameFile,
  type VerifiedFile,
} from "../core/verified_open.ts";
import { ToolError } from "../core/observation.ts";
import { type CheckedPath, isInside, isMissing } from "./paths.ts";

export { openVerified, VerifiedFile, YIELD_EVERY_CHUNKS } from "../core/verified_open.ts";

/** What the helpers need of a {@linkcode CheckedPath}. */
type Checked = Pick<CheckedPath, "path" | "real" | "info">;

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/**
 * The content of the file at absolute `path`, a path found by walking the workspace (or a
 * granted root: `workspace` is whichever folder the walk stays in), opened with
 * {@linkcode openVerified}: it must be a regular file inside `workspace` at a path without
 * symlinks. Null when it is not, or cannot be read. With `maxBytes`, at most that many bytes
 * from the start (a file that grew since its size was checked is never read whole). Never
 * throws.
 */
export function readFileVerified(
  workspace: string,
  path: string,
  maxBytes?: number,
): Uint8Array | null {
  try {
    using file = openFileVerified(workspace, path);
    if (file === null) return null;
    return maxBytes === undefined ? file.readAll() : file.head(maxBytes);
  } catch {
    return null;
  }
}

/**
 * {@linkcode readFileVerified}'s file opened, for reading it a part at a time (a file of any
 * size): null when it is not a regular file inside `workspace` at a path without symlinks, or
 * cannot be opened. The caller closes it. Never throws.
 */
export function openFileVerified(workspace: string, path: string): VerifiedFile | null {
  try {
    if (!isInside(workspace, path)) return null;
    const info = Deno.lstatSync(path);
    if (!info.isFile) return null;
    return openVerified({ path, real: path, info });
  } catch {
    return null;
  }
}

/** Options for {@linkcode writeFileVerified}. */
export interface WriteOptions {
  /** Permission bits for the file; default 0o666 minus the umask (as a new file gets). */
  mode?: number;
}

/**
 * Replaces the file `checked` (from `checkPath(…, {forWrite: true})`) with `content` through a
 * temporary file in the same folder and a rename, confirming each step (see the module notes),
 * so readers never see a half-written file. The parent folder must exist. Throws ToolError
 * POLICY_DENIED `Path "…" changed while it was being written: …` when a step finds the folder
 * or the file is not what was checked, and `Cannot write "…": the file is read-only …` for an
 * existing file nobody may write in place.
 */
export function writeFileVerified(
  checked: Checked,
  content: string,
  options: WriteOptions = {},
): void {
  const { path, real } = checked;
  refuseReadOnly(checked);
  const dir = dirname(real);
  const folder = confirmDirectory(dir, path);
  const temp = join(dir, tempName(basename(real)));
  let fd: number | null;
  try {
    fd = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, options.mode ?? 0o666);
  } catch (error) {
    throw openError(error, path, "written");
  }
  let renamed = false;
  try {
    const stat = fs.fstatSync(fd);
    confirmAt(temp, stat, path, "written");
    if (!sameFile(Deno.lstatSync(dir), folder)) throw changed(path, "written");
    fs.writeFileSync(fd, content);
    if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
    fs.closeSync(fd);
    fd = null;
    try {
      Deno.renameSync(temp, real);
    } catch (error) {
      throw isMissing(error) ? changed(path, "written") : error;
    }
    renamed = true;
    confirmAt(real, stat, path, "written");
  } catch (error) {
    if (fd !== null) fs.closeSync(fd);
    if (!renamed) removeSoon(temp);
    throw error;
  }
  sweepLeftTemps(dir, folder);
}

/**
 * The names {@linkcode writeFileVerified} gives its temporary files: `.<name>.tern-<8 hex>.tmp`.
 */
const TEMP_NAME = /^\..+\.tern-[0-9a-f]{8}\.tmp$/;
/** The longest name a folder entry may have, in bytes (`NAME_MAX`). */
const NAME_MAX_BYTES = 255;
/** The bytes {@linkcode TEMP_NAME} adds to the name: `.`, `.tern-`, 8 hex digits and `.tmp`. */
const TEMP_EXTRA_BYTES = 19;

/**
 * A fresh temporary name for the file `name`, as {@linkcode TEMP_NAME} says, with `name` cut
 * (at a whole character) so the result stays within {@linkcode NAME_MAX_BYTES}: a file whose
 * name is near the limit could otherwise never be written (ENAMETOOLONG).
 */
function tempName(name: string): string {
  const room = NAME_MAX_BYTES - TEMP_EXTRA_BYTES;
  let kept = "";
  let bytes = 0;
  for (const char of name) {
    bytes += encoder.encode(char).length;
    if (bytes > room) break;
    kept += char;
  }
  return `.${kept}.tern-${crypto.randomUUID().slice(0, 8)}.tmp`;
}

const encoder = new TextEncoder();

/**
 * Throws ToolError POLICY_DENIED when the existing file `checked` names is read-only: no write
 * bit in its mode when it was checked (`chmod a-w`). Replacing it by a rename would otherwise
 * change a file nobody may write in place, root included (whose writes ignore the bits). Only
 * the bits are looked at: `access()` needs a permission the worker lacks, and opening the file
 * for writing to find out could reach a device swapped in (Deno drops `O_NOFOLLOW`).
 */
function refuseReadOnly(checked: Checked): void {
  const { path, info } = checked;
  if (!info?.isFile) return;
  if (typeof info.mode !== "number" || (info.mode & 0o222) !== 0) return;
  const mode = (info.mode & 0o777).toString(8).padStart(4, "0");
  throw new ToolError(
    "POLICY_DENIED",
    `Cannot write "${path}": the file is read-only (mode ${mode}); ask the user to make it writable or to make this change`,
  );
}

/**
 * How old (by its last write) a temporary file is when it counts as left behind, in
 * milliseconds: a writer renames its file microseconds after its last write, so one this old
 * was left by a writer that was killed (SIGKILL, a crash) before it could remove it.
 */
const LEFT_TEMP_MS = 60_000;
/** Entries of one folder looked at for left temporary files, at most. */
const SWEEP_ENTRIES = 10_000;
/** Folders swept by this process (each once: only a killed writer leaves temporary files). */
const swept = new Set<string>();
/** Folders {@linkcode swept} remembers at most; then it starts again. */
const SWEPT_FOLDERS = 10_000;

/**
 * Removes, the first time this process writes into folder `dir` (`folder` its identity from
 * the write's check), the temporary files writers killed mid-write left there: regular files
 * (not links, not folders) named as {@linkcode TEMP_NAME} says whose last write is
 * {@linkcode LEFT_TEMP_MS} or more ago; nothing else, and nothing once the folder is no longer
 * the one checked. Looks at {@linkcode SWEEP_ENTRIES} entries at most. Never throws.
 */
function sweepLeftTemps(dir: string, folder: Deno.FileInfo): void {
  if (swept.has(dir)) return;
  if (swept.size >= SWEPT_FOLDERS) swept.clear();
  swept.add(dir);
  try {
    let seen = 0;
    for (const entry of Deno.readDirSync(dir)) {
      if (++seen > SWEEP_ENTRIES) return;
      if (!entry.isFile || !TEMP_NAME.test(entry.name)) continue;
      const temp = join(dir, entry.name);
      const info = lstatOrNull(temp);
      const written = info?.mtime?.getTime();
      if (!info?.isFile || written === undefined || Date.now() - written < LEFT_TEMP_MS) continue;
      if (!sameFile(Deno.lstatSync(dir), folder)) return;
      Deno.removeSync(temp);
    }
  } catch {
    // Best effort: a folder that cannot be listed, or a file removed meanwhile.
  }
}

/**
 * Creates folder `dir` (absolute, real, inside `workspace`: the workspace, or the granted root
 * `checkPath` returned as `root`) and its missing parents one at a time, confirming each is a
 * real folder at a symlink-free path before creating inside it. `path` is the caller's path,
 * for messages. Throws Deno's NotADirectory or AlreadyExists when a parent is a file, and
 * ToolError POLICY_DENIED when a folder changed meanwhile.
 */
export function makeDirsVerified(workspace: string, dir: string, path: string): void {
  const missing: string[] = [];
  let existing = dir;
  while (isInside(workspace, existing) && lstatOrNull(existing) === null) {
    missing.push(existing);
    if (existing === workspace) break;
    existing = dirname(existing);
  }
  if (lstatOrNull(existing)?.isFile) {
    throw new Deno.errors.NotADirectory(`Cannot create a folder below file "${existing}"`);
  }
  if (missing.length === 0) return;
  confirmDirectory(existing, path);
  for (const folder of missing.reverse()) {
    Deno.mkdirSync(folder);
    try {
      confirmDirectory(folder, path);
    } catch (error) {
      try {
        Deno.removeSync(folder);
      } catch {
        // Best effort: the error that matters is already being thrown.
      }
      throw error;
    }
  }
}

/** How often {@linkcode removeSoon} tries, 1 ms apart (a second at most: a loaded machine may take that long to swap a folder back). */
const REMOVE_TRIES = 1000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Removes the temporary file at `path`, which this call created. A
 * failed step usually means a concurrent rename moved its folder away for a moment (a folder
 * swapped with a symlink and back), and then `path` leads elsewhere, where nothing has its
 * name (or into a read-only folder): so it tries again, whatever the error, up to
 * {@linkcode REMOVE_TRIES} times, until the path names it again. Its random name cannot name anything else. Never throws; best effort (a
 * folder moved for good keeps it, where it was moved to).
 */
function removeSoon(path: string): void {
  for (let tries = 0; tries < REMOVE_TRIES; tries++) {
    try {
      Deno.removeSync(path);
      return;
    } catch {
      // Not found, or "read-only file system" when the path leads into a read-only folder.
    }
    Atomics.wait(pause, 0, 0, 1);
  }
}
