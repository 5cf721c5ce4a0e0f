/**
 * Signalling a process group (a process started with `detached: true`, so its pgid is its pid)
 * and stopping one gracefully, then by force. Shared by the sandbox's command runner and the
 * MCP client's stdio transport, which both must end everything a process started.
 */

/**
 * Sends `signal` to every process in group `pgid`. Returns false when the group has no
 * processes left. Never throws for a missing group.
 */
export function signalProcessGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Stops group `pgid`: SIGTERM, then SIGKILL once the leader has exited (`exited` settles) or
 * `graceMs` milliseconds have passed, whichever is first, so no process that ignores SIGTERM
 * survives.
 */
export async function terminateProcessGroup(
  pgid: number,
  exited: Promise<unknown>,
  graceMs = 500,
): Promise<void> {
  if (!signalProcessGroup(pgid, "SIGTERM")) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
  await Promise.race([exited.catch(() => {}), grace]);
  clearTimeout(timer);
  signalProcessGroup(pgid, "SIGKILL");
}
