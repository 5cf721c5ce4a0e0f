/**
 * How commands and background processes run without a sandbox are kept together, so that all
 * of one ends with it, a process that left its process group (`setsid`) included: a cgroup v2
 * cgroup each (run_cgroup.ts), else a pid namespace each (`unshare`), else nothing.
 */
import { findCommandCgroupBase } from "./run_cgroup.ts";

/**
 * Said once when commands run without a sandbox and a process that leaves their process group
 * cannot be reached.
 */
export const UNCONTAINED_NOTE = "without a sandbox, a process a command starts in a session of " +
  "its own (setsid, a daemon) outlives the command and tern: no cgroup (cgroup v2 with " +
  "cgroup.kill, writable here) and no pid namespace (unshare) is available to end it";

/** How commands without a sandbox are kept together, so that all of a command ends with it. */
export type Containment =
  | { kind: "cgroup"; base: string }
  | { kind: "pid-namespace"; unshare: string }
  | { kind: "none" };

/** `unshare` in a pid namespace whose processes all die with it (SIGKILL). */
export const UNSHARE_ARGS = ["--pid", "--fork", "--kill-child"];

/**
 * How this machine lets commands without a sandbox be kept together: a cgroup each (see
 * `findCommandCgroupBase`), else a pid namespace each when util-linux `unshare` (in `/usr/bin`
 * or `/bin`, never on a PATH a command may write) makes one for this user,
 * else none. Two process starts at most, once per process; never throws.
 */
export function findContainment(): Promise<Containment> {
  // Once per process: tern's own cgroup, and what this user may make, do not change.
  return found ??= discover();
}

let found: Promise<Containment> | undefined;

async function discover(): Promise<Containment> {
  const base = await findCommandCgroupBase();
  if (base !== null) return { kind: "cgroup", base };
  const unshare = ["/usr/bin/unshare", "/bin/unshare"].find(isFile);
  if (unshare === undefined) return { kind: "none" };
  try {
    const { success } = await new Deno.Command(unshare, {
      args: [...UNSHARE_ARGS, "true"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    if (success) return { kind: "pid-namespace", unshare };
  } catch {
    // It cannot run.
  }
  return { kind: "none" };
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

let made = 0;

/** The folder of a new command cgroup under `base` (run_cgroup.ts's `commandCgroupPrefix` makes it). */
export function newCommandCgroup(base: string): string {
  const hex = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  return `${base}/tern-cmd-${Deno.pid}-${++made}-${hex}`;
}
