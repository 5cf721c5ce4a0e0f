/**
 * What one hook's run means: Claude Code's reading of its exit code and output for its event
 * (exit 2 blocks, exit 0 may print JSON that decides, rewrites or adds context), its texts
 * capped.
 */
import { visibleText } from "../../core/terminal_text.ts";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "../../core/json_depth.ts";
import type { HookCommand } from "./config.ts";

/**
 * The most characters of one hook's text that reach the model or the person (its context, or
 * its reason to block, ask or stop); the rest is cut, with a note saying how much.
 */
export const MAX_HOOK_TEXT_CHARS = 10_000;

/** One hook's answer. */
export interface Answer {
  block?: string;
  ask?: string;
  updatedInput?: Record<string, unknown>;
  context?: string;
  stop?: string;
  note?: string;
  /** The person was told of `note` already, by a warning given once: not a note again. */
  told?: boolean;
  exitCode?: number;
}

/** Claude Code's meaning of a hook's exit code and output, for its event, its texts capped. */
export function interpret(
  hook: HookCommand,
  ran: { stdout: string; stderr: string; code: number },
): Answer {
  const answer = meaning(hook, ran);
  for (const key of ["block", "ask", "context", "stop", "note"] as const) {
    const text = answer[key];
    if (text !== undefined) answer[key] = capped(text);
  }
  return answer;
}

/** `text` cut to {@linkcode MAX_HOOK_TEXT_CHARS}, with a note of how much was left out. */
function capped(text: string): string {
  if (text.length <= MAX_HOOK_TEXT_CHARS) return text;
  const cut = text.length - MAX_HOOK_TEXT_CHARS;
  return `${text.slice(0, MAX_HOOK_TEXT_CHARS)}\n[${cut} more characters of this hook's ` +
    `output were cut: a hook gives at most ${MAX_HOOK_TEXT_CHARS}]`;
}

function meaning(
  hook: HookCommand,
  ran: { stdout: string; stderr: string; code: number },
): Answer {
  const name = `The ${hook.event} hook "${shownCommand(hook)}"`;
  const stderr = ran.stderr.trim();
  if (ran.code === 2) {
    return { block: stderr || `${name} blocked this (exit code 2) without saying why` };
  }
  if (ran.code !== 0) {
    return { note: `${name} failed (exit code ${ran.code})${stderr ? `: ${stderr}` : ""}` };
  }
  const stdout = ran.stdout.trim();
  if (!stdout.startsWith("{")) {
    // Plain stdout is context for the events whose output Claude Code gives the model.
    const plain = hook.event === "UserPromptSubmit" || hook.event === "SessionStart";
    return plain && stdout !== "" ? { context: stdout } : {};
  }
  let data: unknown;
  try {
    data = JSON.parse(stdout);
  } catch {
    return { note: `${name} printed JSON that cannot be read; its answer was ignored` };
  }
  if (!isObject(data)) return { note: `${name} printed JSON that is not an object; ignored` };
  const answer: Answer = {};
  const specific = isObject(data.hookSpecificOutput) ? data.hookSpecificOutput : {};
  const reason = typeof data.reason === "string" ? data.reason : undefined;
  const decisionReason = typeof specific.permissionDecisionReason === "string"
    ? specific.permissionDecisionReason
    : reason;
  const permission = specific.permissionDecision ??
    (data.decision === "approve" ? "allow" : undefined);
  if (data.decision === "block" || permission === "deny") {
    answer.block = decisionReason ?? `${name} blocked this`;
  } else if (permission === "ask") {
    answer.ask = decisionReason ?? `${name} asks for your decision`;
  }
  if (specific.updatedInput !== undefined) {
    if (!isObject(specific.updatedInput)) {
      answer.note = `${name} gave an updatedInput that is not an object; ignored`;
    } else if (nestsDeeperThan(specific.updatedInput, MAX_ARGUMENT_DEPTH)) {
      // Held to the model's own limit (walking it would overflow the stack). Blocked, not
      // ignored: a hook rewrites a call to change what runs, and the call as it was may be
      // what it meant to stop.
      answer.block ??= `${name} rewrote this call into an input nested more than ` +
        `${MAX_ARGUMENT_DEPTH} levels deep, which tern cannot use`;
    } else answer.updatedInput = specific.updatedInput;
  }
  if (typeof specific.additionalContext === "string" && specific.additionalContext !== "") {
    answer.context = specific.additionalContext;
  }
  if (data.continue === false) {
    answer.stop = typeof data.stopReason === "string"
      ? data.stopReason
      : `${name} stopped the turn`;
  }
  return answer;
}

/** Whether `value` (parsed JSON) is an object, not an array or null. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A hook's command as the person is told of it: every control, line break and invisible
 * character shown, never obeyed or dropped (a project's command could otherwise hide what runs).
 */
export function shownCommand(hook: Pick<HookCommand, "command">): string {
  return visibleText(hook.command);
}
