/** `tern acp`: the Agent Client Protocol on stdin/stdout (docs/acp.md). */
import type { RunFlags } from "../run.ts";

/** Serves ACP until the client closes stdin; returns the exit code. */
export function runAcp(_flags: RunFlags): Promise<number> {
  return Promise.reject(new Error("tern acp is not built yet"));
}
