/** How much memory another process has used, read from /proc. */

/** The largest resident size process `pid` has had, in MiB. */
export async function peakMiB(pid: number): Promise<number> {
  // Deno grants another process's /proc files only with all access: cat reads it.
  const { stdout } = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const status = new TextDecoder().decode(stdout);
  return Number(status.match(/^VmHWM:\s+(\d+) kB/m)![1]) / 1024;
}
