/**
 * The workspace files a project server's command line names (its script or entry point:
 * `node ./server.js`, `python tools/srv.py`, `deno run x.ts`), with a hash of each one's
 * content, so that trusting the server pins what actually runs, not only the words that start it.
 */
import { relative, resolve, sep } from "../core/path.ts";
import { WORKSPACE_PIN } from "./types.ts";

/** Arguments that name a script even before the file exists. */
const SCRIPT_NAME = /\.(?:[cm]?[jt]sx?|py|rb|sh|bash|zsh|pl|php|lua|jar|wasm|exe|bat|ps1)$/i;
/** What a file that is named but absent is pinned as: creating it needs trust again. */
export const MISSING = "missing";

/**
 * The workspace files `argv` names, relative to `workspace`, each with the SHA-256 (hex) of its
 * content, or {@linkcode MISSING} for a script-like path that does not exist (yet). Relative
 * paths start at `cwd`. An argument counts when it is a path inside the workspace to a file, or
 * a path inside it that looks like a script (it holds a "/" or ends in a script's extension);
 * `--flag=value` counts by its value. The program itself counts only when written as a path.
 * Symlinks are followed: what is hashed is what would run.
 */
export async function pinnedFiles(
  argv: readonly string[],
  cwd: string,
  workspace: string,
): Promise<Record<string, string>> {
  const pins: Record<string, string> = {};
  for (const [index, arg] of argv.entries()) {
    const value = arg.startsWith("-") ? arg.slice(arg.indexOf("=") + 1 || arg.length) : arg;
    if (value === "" || value.includes("://") || value.includes("\0")) continue;
    if (index === 0 && !value.includes("/")) continue;
    const path = resolve(cwd, value);
    if (
      path === workspace || !path.startsWith(workspace.endsWith(sep) ? workspace : workspace + sep)
    ) {
      continue;
    }
    const name = relative(workspace, path);
    const hash = await hashFile(path);
    if (hash !== undefined) pins[name] = hash;
    else if (value.includes("/") || SCRIPT_NAME.test(value)) pins[name] ??= MISSING;
  }
  return pins;
}

/**
 * The whole `workspace` as one pin: a SHA-256 over the path, kind, size, modification and
 * change times and inode of every entry below it (`.git` left out, symlinks not followed but
 * their targets counted). For a project server with the network: the files its command line
 * names are not all the code it runs (`server.js` may `require("./lib.js")`), and any file of
 * the workspace can be changed by the agent's commands, which have no network; a server that
 * loads one would give that code the network. So trusting such a server pins every file, and
 * any change since (by the agent, a pull, or the person) needs trust again. The change time
 * cannot be set back by a command, so a file rewritten and given its old mtime still counts.
 */
export async function pinnedWorkspace(workspace: string): Promise<Record<string, string>> {
  const lines: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (error) {
      lines.push(`${prefix}\0unreadable:${(error as Error).name}`);
      return;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      if (prefix === "" && entry.name === ".git") continue;
      const path = `${dir}${sep}${entry.name}`;
      const name = `${prefix}${entry.name}`;
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(path);
      } catch {
        continue;
      }
      const kind = info.isSymlink
        ? `l:${await Deno.readLink(path).catch(() => "")}`
        : info.isDirectory
        ? "d"
        : "f";
      lines.push(
        [name, kind, info.size, info.mtime?.getTime(), info.ctime?.getTime(), info.ino].join("\0"),
      );
      if (info.isDirectory) await walk(path, `${name}/`);
    }
  };
  await walk(workspace, "");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(lines.join("\n")));
  return { [WORKSPACE_PIN]: hex(digest) };
}

/** SHA-256 (hex) of the regular file at `path`; undefined when there is none. */
async function hashFile(path: string): Promise<string | undefined> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    if (!(await Deno.stat(path)).isFile) return undefined;
    bytes = await Deno.readFile(path);
  } catch {
    return undefined;
  }
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

function hex(digest: ArrayBuffer): string {
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Why the pins `now` differ from the pins trusted `then`, as one phrase per file
 * (`"server.js" changed`); empty when they are the same.
 */
export function pinChanges(
  then: Readonly<Record<string, string>>,
  now: Readonly<Record<string, string>>,
): string[] {
  const changes: string[] = [];
  for (const name of [...new Set([...Object.keys(then), ...Object.keys(now)])].sort()) {
    const before = then[name];
    const after = now[name];
    if (before === after) continue;
    if (before === undefined) changes.push(`it now runs "${name}"`);
    else if (after === undefined) changes.push(`it no longer runs "${name}"`);
    else if (after === MISSING) changes.push(`"${name}" was removed`);
    else if (before === MISSING) changes.push(`"${name}" was created`);
    else if (name === WORKSPACE_PIN) {
      changes.push("files of the workspace changed (a server with the network may load any)");
    } else changes.push(`"${name}" changed`);
  }
  return changes;
}
