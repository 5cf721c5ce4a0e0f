/**
 * Finding FIFOs a program would wait on. git and ripgrep open every `.gitignore` (and git every
 * `.gitattributes`) they meet with a plain `open()`, which on a FIFO waits for a writer with no
 * end; a command can make one (`mkfifo .gitignore`). Their callers search for such FIFOs once the
 * program has run a while, and then work around them.
 */
import { join, relative } from "./path.ts";
import { after } from "./timer.ts";
import { readCapped } from "./read_capped.ts";
import { hostProgram } from "./host_programs.ts";
import { signalProcessGroup, spawnProcessGroup } from "./process_group.ts";

/** A program has run this long: the folder it reads is searched for FIFOs it may wait on. */
export const FIFO_CHECK_MS = 2_000;
/** The search gives up after this long (it only reads folders). */
const FIND_TIMEOUT_MS = 20_000;

/**
 * The FIFOs named one of `names` under `root` (an absolute real path), as absolute paths, found
 * by `find` without following links and without entering `.git` folders; each checked again
 * with lstat. Empty when `find` cannot run or fails; never throws.
 */
export async function findFifos(
  root: string,
  names: readonly string[],
  path?: string,
): Promise<string[]> {
  const named = names.flatMap((name, i) => i === 0 ? ["-name", name] : ["-o", "-name", name]);
  let child: Deno.ChildProcess;
  try {
    child = spawnProcessGroup(hostProgram("find", path), {
      args: ["-P", root, "(", "-name", ".git", "-prune", ")", "-o", "(", ...named, ")"]
        .concat(["-type", "p", "-print0"]),
      cwd: "/",
      env: { PATH: path ?? Deno.env.get("PATH") ?? "/usr/bin:/bin", LC_ALL: "C" },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    });
  } catch {
    return [];
  }
  const kill = () => signalProcessGroup(child.pid, "SIGKILL");
  const timer = after(FIND_TIMEOUT_MS, kill);
  try {
    const { bytes } = await readCapped(child.stdout, 1024 * 1024, kill);
    await child.status;
    const found: string[] = [];
    for (const name of new TextDecoder().decode(bytes).split("\0")) {
      const inside = relative(root, name);
      if (name === "" || inside.startsWith("..") || inside === "") continue;
      if (isFifo(join(root, inside))) found.push(join(root, inside));
    }
    return found;
  } catch {
    return [];
  } finally {
    timer.cancel();
    kill();
  }
}

/** Whether `path` is a FIFO itself (not through a link at its end). */
export function isFifo(path: string): boolean {
  try {
    return Deno.lstatSync(path).isFifo === true;
  } catch {
    return false;
  }
}
