/**
 * The sandbox's one-time checks started ahead of time: a front end (the conversation's preload)
 * calls {@linkcode prewarmSandbox} as soon as a turn's model request is out, and the checks
 * (processes of their own) run while tern loads the sandbox's code; `createSandbox()` then
 * takes their results instead of starting them again.
 */
import { phaseMark } from "../core/phase_marks.ts";
import { probeBwrap } from "./bwrap.ts";
import { prewarmHostPrivatePaths, takeWarmHostPrivatePaths } from "./host_private.ts";

/**
 * Starts the bubblewrap probe (`bwrapPath`, default `bwrap`; kept for the process, see
 * `probeBwrap`) and the search for root-only host files (taken by the next sandbox that opens,
 * see `takeWarmHostPrivatePaths`). Never throws.
 */
export function prewarmSandbox(bwrapPath?: string): void {
  phaseMark("sandbox_checks");
  probeBwrap({ bwrapPath }).catch(() => {});
  prewarmHostPrivatePaths();
}

/**
 * Waits for what {@linkcode prewarmSandbox} started and no sandbox took (the opening was given
 * up before it began), so nothing of it outlives its owner. Never throws.
 */
export async function settlePrewarm(bwrapPath?: string): Promise<void> {
  await takeWarmHostPrivatePaths()?.catch(() => {});
  await probeBwrap({ bwrapPath }).catch(() => {});
}
