/**
 * Resource limits of shell commands: processes, memory, CPU time, file size and the size of the
 * private `/tmp`. They cost no process start: the rlimits are `ulimit` builtins at the head of
 * the command's own `bash -c`, `/tmp` is a bubblewrap tmpfs with `--size`, and the process cap
 * as root, and the memory of all a run's commands together, are the run's cgroups, which the
 * sandbox's launcher joins by builtin writes before bubblewrap starts (see run_cgroup.ts and
 * `launchArgv`).
 */

import { DEFAULT_LIMITS, LIMIT_NAMES, type ResourceLimits } from "../config/schema.ts";

export { DEFAULT_LIMITS, LIMIT_NAMES, type ResourceLimits };

/** Options for {@linkcode ulimitPrefix}. */
export interface UlimitOptions {
  /**
   * Also cap processes (default true). Off for commands outside bubblewrap: there RLIMIT_NPROC
   * counts every process of the person's user, not the command's.
   */
  processes?: boolean;
  /** The files `0` is written to, to move the shell into the run's cgroups (run_cgroup.ts). */
  cgroupFiles?: readonly string[];
}

/**
 * The `bash` text that sets `limits` as both soft and hard rlimits of the shell (so nothing it
 * starts can raise them again without CAP_SYS_RESOURCE, which the sandbox drops), followed by
 * `; `. A limit the shell cannot set (a lower hard limit was inherited) keeps the lower one, and
 * its error is not shown. Only builtins: no process starts.
 */
export function ulimitPrefix(limits: ResourceLimits, options: UlimitOptions = {}): string {
  const parts: string[] = [...joinParts(options.cgroupFiles ?? [])];
  if (options.processes ?? true) parts.push(`ulimit -u ${whole(limits.processes)}`);
  parts.push(`ulimit -d ${whole(limits.memoryMb * 1024)}`);
  parts.push(`ulimit -t ${whole(limits.cpuSeconds)}`);
  parts.push(`ulimit -f ${whole(limits.fileSizeMb * 1024)}`);
  return `{ ${parts.join("; ")}; } 2>/dev/null; `;
}

/**
 * The `bash` text that moves the shell into the run's cgroups (`files`, see run_cgroup.ts),
 * followed by `; `; empty without files. Builtins only.
 */
export function cgroupJoin(files: readonly string[]): string {
  return files.length === 0 ? "" : `{ ${joinParts(files).join("; ")}; } 2>/dev/null; `;
}

function joinParts(files: readonly string[]): string[] {
  return files.map((file) => `echo 0 >${quote(file)}`);
}

/** bubblewrap's arguments for a private `/tmp` of `limits.tmpMb` MiB. */
export function tmpfsArgs(limits: Pick<ResourceLimits, "tmpMb">): string[] {
  return ["--size", String(whole(limits.tmpMb * 1024 * 1024)), "--tmpfs", "/tmp"];
}

function whole(value: number): number {
  if (!Number.isFinite(value) || value < 1) {
    throw new RangeError(`Cannot use the limit "${value}": it must be a positive number`);
  }
  return Math.floor(value);
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
