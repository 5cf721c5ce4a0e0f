/**
 * A trusted project hook runs from checked copies of its pinned files, never from the live
 * workspace: each pinned file is copied to a private folder of tern's (hidden from every
 * command), the copy is hashed and compared with the pin, and the copy is bound read-only over
 * the file's path in the hook's own one-shot sandbox. So a process of the model's that swaps the
 * script between tern's check and the hook's start changes nothing the hook runs.
 *
 * Linux drops a bind mount whose mount point another mount namespace renames or deletes (the
 * model's background processes run in sandboxes of their own), renaming a folder above a pinned
 * file leads its path elsewhere, and a file added beside a pinned one (a module Python imports
 * in place of the standard library's, a `deno.json` pinned as missing) is code no pin covers.
 * Each changes the inode or the change time of the file or of a folder on its path (for the
 * workspace's own folder, where a pin lies in it, the names in it). {@linkcode FrozenPins.moved}
 * compares them with marks taken before the copies (the caller checks the pins again after
 * those) once the hook ran: the caller then throws the hook's answer away, as one that could
 * not run. Not seen: a file added to the workspace's own folder and removed again meanwhile.
 */
import { dirname, join, relative } from "../../core/path.ts";
import { openVerified } from "../../core/verified_open.ts";
import { MAX_PINNED_FILE_BYTES } from "../../mcp/_pinned_files.ts";

/** A hook's pinned files, copied and checked for one run. */
export interface FrozenPins {
  /** Each pinned file's real path and its checked copy, for the sandbox to bind read-only. */
  readonly copies: Readonly<Record<string, string>>;
  /**
   * The pinned files, and the folders on their paths below the workspace, that were renamed,
   * replaced or changed since the copies were made (none: the hook ran what was checked).
   */
  moved(): Promise<string[]>;
  /** Removes the copies. Never throws. */
  release(): Promise<void>;
}

/** A pin that is a file's SHA-256 (not missing, a link out of the workspace or unpinnable). */
const HASH = /^[0-9a-f]{64}$/;

/**
 * Copies each file of `pins` (relative to `workspace`, see `hookPins`) that is pinned by its
 * hash to a new private folder and checks each copy against its pin; a string saying which
 * file differs when one does (the caller does not run the hook). Never throws for a file that
 * cannot be read: that is a difference.
 */
export async function freezePins(
  pins: Readonly<Record<string, string>>,
  workspace: string,
): Promise<FrozenPins | string> {
  const root = await Deno.realPath(workspace).catch(() => workspace);
  const dir = await Deno.makeTempDir({ prefix: "tern-hook-pins-" });
  const release = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  const copies: Record<string, string> = {};
  const marks = new Map<string, string>();
  try {
    // Every pin and the folders on its path are marked before any copy, each once: marking
    // again could hide a change. A file that appears where the hook's program looks for code (a
    // module beside its script, a `deno.json` pinned as missing) changes the folder it lies
    // in, as a rename does; the workspace's own folder counts only for pins that lie in it.
    const markSteps = async (path: string) => {
      const steps = pathSteps(root, path);
      if (dirname(path) === root) steps.push(root);
      for (const step of steps) {
        if (!marks.has(step)) marks.set(step, await mark(step, root));
      }
    };
    for (const name of Object.keys(pins)) await markSteps(join(root, name));
    let index = 0;
    for (const [name, pin] of Object.entries(pins)) {
      if (!HASH.test(pin)) continue;
      const path = join(root, name);
      // Bound where a link leads (a pin inside the workspace), so the link shows the copy too.
      const real = await Deno.realPath(path).catch(() => path);
      await markSteps(real);
      const copy = join(dir, String(index++));
      // The copy's own hash is checked: what is bound is exactly what was compared. A file
      // that now leads out of the workspace is never read: trust pinned one inside it.
      const inside = real.startsWith(`${root}/`);
      if (!inside || await copyFile(real, copy) !== pin) {
        await release();
        return `"${name}" changed since you trusted it`;
      }
      copies[real] = copy;
    }
  } catch (error) {
    await release();
    return `its files could not be copied: ${error instanceof Error ? error.message : error}`;
  }
  return {
    copies,
    moved: async () => {
      const moved: string[] = [];
      for (const [path, before] of marks) {
        if (await mark(path, root) !== before) moved.push(relative(root, path) || ".");
      }
      return moved;
    },
    release,
  };
}

/** `path` and each folder above it up to `root` (not `root` itself, which commands cannot move). */
function pathSteps(root: string, path: string): string[] {
  const steps: string[] = [];
  for (let step = path; step !== root && step.startsWith(`${root}/`); step = dirname(step)) {
    steps.push(step);
  }
  return steps;
}

/**
 * The names every sandbox guards in the workspace: absent, each is an empty folder made as a
 * mount point while a sandbox runs (see `ShellPlan.guarded`), and no command can make it.
 */
const GUARDED_NAMES = new Set([".git", ".tern"]);

/**
 * What a rename, a replacement or a write changes: the inode and its change time (lstat). For
 * the workspace itself (`root`), whose change time every sandbox's mount points change, the
 * names in it instead.
 */
async function mark(path: string, root: string): Promise<string> {
  try {
    if (path === root) {
      const names: string[] = [];
      for await (const entry of Deno.readDir(root)) {
        if (!GUARDED_NAMES.has(entry.name)) names.push(entry.name);
      }
      return names.sort().join("\n");
    }
    const info = await Deno.lstat(path);
    return `${info.dev}:${info.ino}:${info.ctime?.getTime()}:${info.mtime?.getTime()}`;
  } catch {
    return "absent";
  }
}

/**
 * Copies the regular file at `from` (its real path) to `to` and returns the copy's SHA-256;
 * undefined when it is not a regular file, is swapped while opened, or passes the pin cap. Never
 * opens a FIFO or a device, never throws.
 */
async function copyFile(from: string, to: string): Promise<string | undefined> {
  // Loaded only to hash: node:crypto brings in Deno's Node layer, which the start of every run
  // must not pay for (hooks/run.ts, which imports this module, loads with the conversation).
  const { createHash } = await import("node:crypto");
  const digest = createHash("sha256");
  let out: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(from);
    if (!info.isFile || info.size > MAX_PINNED_FILE_BYTES) return undefined;
    using file = openVerified({ path: from, real: from, info });
    // Read-only, executable where the file is (`./tools/check.sh` runs it by its mode).
    const mode = 0o444 | ((info.mode ?? 0) & 0o111);
    out = await Deno.open(to, { write: true, createNew: true, mode });
    let read = 0;
    for await (const chunk of file.chunks()) {
      read += chunk.length;
      if (read > MAX_PINNED_FILE_BYTES) return undefined;
      digest.update(chunk);
      for (let done = 0; done < chunk.length;) done += await out.write(chunk.subarray(done));
    }
    return digest.digest("hex");
  } catch {
    return undefined;
  } finally {
    out?.close();
  }
}
