/** Looking at processes through `ps` (tests run without read access to /proc), for tests of what outlives what. */

interface Row {
  pid: number;
  ppid: number;
  zombie: boolean;
}

function table(): Row[] {
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,stat="] }).outputSync();
  return new TextDecoder().decode(ps.stdout).split("\n").flatMap((line) => {
    const [pid, ppid, stat] = line.trim().split(/\s+/);
    return pid === undefined || pid === ""
      ? []
      : [{ pid: Number(pid), ppid: Number(ppid), zombie: stat?.startsWith("Z") ?? false }];
  });
}

/** Whether `pid` is a live process (not a zombie). */
export function isAlive(pid: number): boolean {
  return table().some((row) => row.pid === pid && !row.zombie);
}

/** `pid` and every process below it, now. */
export function descendants(pid: number): number[] {
  const rows = table();
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    for (const row of rows) if (row.ppid === found[i]) found.push(row.pid);
  }
  return found;
}

/** Whether any of `pids` is a live process. */
export function anyAlive(pids: readonly number[]): boolean {
  return table().some((row) => pids.includes(row.pid) && !row.zombie);
}

/**
 * Whether `condition` comes to hold, looking every 50 ms for up to `boundMs` (a bound far above
 * what a loaded machine needs: it only keeps a failing test from hanging).
 */
export async function comesTrue(condition: () => boolean, boundMs = 120_000): Promise<boolean> {
  const end = Date.now() + boundMs;
  while (!condition()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Whether a live process's command line holds `text` (pgrep -f). */
export async function runningWith(text: string): Promise<boolean> {
  const out = await new Deno.Command("pgrep", { args: ["-f", text], stdout: "null" }).output();
  return out.code === 0;
}

/**
 * Waits until a live process's command line holds `text`, looking every 20 ms; false after
 * `boundMs` (a bound far above what a loaded machine needs: it only keeps a test from hanging).
 */
export async function untilRunning(text: string, boundMs = 120_000): Promise<boolean> {
  const end = Date.now() + boundMs;
  while (!await runningWith(text)) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
