/**
 * Runs lifecycle hooks the way Claude Code does, inside tern's shell sandbox: each matching
 * command gets the event as JSON on stdin; exit code 2 blocks (its stderr is the reason), exit
 * 0 may print JSON that decides (`decision`, `hookSpecificOutput.permissionDecision`), rewrites
 * the tool input (`updatedInput`) or adds context (`additionalContext`); any other exit, a
 * timeout or JSON that cannot be read is a non-blocking error, noted. Every run is audited.
 *
 * The shell runner gives a command no stdin and mixes its stdout and stderr, so each hook runs
 * inside a small wrapper: the JSON comes through a quoted here-document, the hook's stdout and
 * stderr go to files in the sandbox's private tmp, and the wrapper prints them back between
 * random markers, with the exit code.
 */
import type { AuditRecord } from "../audit.ts";
import type { ShellRunner } from "../types.ts";
import { claudeToolName, type HookCommand, type HookEvent, matches } from "./config.ts";

/** What the hooks of one event decided together. */
export interface HookOutcome {
  /** Why the action is blocked (exit 2's stderr, a `deny` or `block` reason). */
  block?: string;
  /** A PreToolUse hook asked for the person's decision, with its reason. */
  ask?: string;
  /** The tool input a PreToolUse hook rewrote (the last one's, in configuration order). */
  updatedInput?: Record<string, unknown>;
  /** Text for the model (`additionalContext`; plain stdout of UserPromptSubmit, SessionStart). */
  context: string[];
  /** `continue: false`: the turn stops, with this reason for the person. */
  stop?: string;
  /** For the person: hooks that failed, timed out or answered JSON that cannot be read. */
  notes: string[];
}

/** Where hooks run and where their runs are recorded. */
export interface HookRunnerOptions {
  /** The trusted hooks. */
  hooks: readonly HookCommand[];
  /** The sandbox's shell runner (undefined when commands cannot be confined: nothing runs). */
  shell: () => { run: ShellRunner; confined: boolean } | undefined;
  workspace: string;
  sessionId: string;
  transcriptPath: string;
  audit?: (record: AuditRecord) => void;
  /** For the audit record. */
  profile: string;
  mode: AuditRecord["mode"];
}

/** The hooks of a session. */
export class HookRunner {
  readonly #options: HookRunnerOptions;

  constructor(options: HookRunnerOptions) {
    this.#options = options;
  }

  /** Whether any hook listens to `event` (for `toolName`, when given). */
  has(event: HookEvent, toolName?: string): boolean {
    return this.#options.hooks.some((hook) =>
      hook.event === event && (toolName === undefined || matches(hook.matcher, toolName))
    );
  }

  /**
   * Runs the hooks of `event` that match `toolName` (all at once, as Claude Code does) with
   * `fields` added to the common input, and merges their answers: a block or deny wins over
   * ask, ask over allow (which is no opinion here).
   */
  async fire(event: HookEvent, fields: Record<string, unknown>, options: {
    toolName?: string;
    callId?: string;
    signal?: AbortSignal;
  } = {}): Promise<HookOutcome> {
    const outcome: HookOutcome = { context: [], notes: [] };
    const chosen = this.#options.hooks.filter((hook) =>
      hook.event === event && matches(hook.matcher, options.toolName)
    );
    if (chosen.length === 0) return outcome;
    const input = {
      session_id: this.#options.sessionId,
      transcript_path: this.#options.transcriptPath,
      cwd: this.#options.workspace,
      hook_event_name: event,
      ...fields,
    };
    const answers = await Promise.all(
      chosen.map((hook) => this.#runOne(hook, input, options)),
    );
    for (const answer of answers) merge(outcome, answer, event);
    return outcome;
  }

  async #runOne(
    hook: HookCommand,
    input: Record<string, unknown>,
    options: { toolName?: string; callId?: string; signal?: AbortSignal },
  ): Promise<Answer> {
    const started = performance.now();
    const shell = this.#options.shell();
    let answer: Answer;
    let exitCode: number | null = null;
    if (shell === undefined) {
      answer = {
        note: `The ${hook.event} hook "${hook.command}" did not run: commands cannot be ` +
          "confined here (no bubblewrap)",
      };
    } else {
      const marker = `TERN_HOOK_${crypto.randomUUID().replaceAll("-", "")}`;
      try {
        const result = await shell.run(
          wrapper(hook.command, JSON.stringify(input), marker, this.#options.workspace),
          {
            cwd: this.#options.workspace,
            timeoutMs: hook.timeoutS * 1000,
            signal: options.signal,
          },
        );
        if (result.timedOut) {
          answer = {
            note: `The ${hook.event} hook "${hook.command}" timed out after ${hook.timeoutS} s`,
          };
        } else {
          const ran = unwrap(result.output, marker);
          if (ran === undefined) {
            answer = {
              note: `The ${hook.event} hook "${hook.command}" could not run: ` +
                result.output.trim().slice(-300),
            };
          } else {
            exitCode = ran.code;
            answer = interpret(hook, ran);
          }
        }
      } catch (error) {
        answer = {
          note: `The ${hook.event} hook "${hook.command}" could not start: ` +
            (error instanceof Error ? error.message : String(error)),
        };
      }
    }
    this.#audit(hook, answer, exitCode, options, performance.now() - started, shell?.confined);
    return answer;
  }

  #audit(
    hook: HookCommand,
    answer: Answer,
    exitCode: number | null,
    options: { toolName?: string; callId?: string },
    ms: number,
    confined: boolean | undefined,
  ): void {
    const blocked = answer.block !== undefined;
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      session: this.#options.sessionId,
      callId: options.callId ?? hook.event,
      tool: `hook:${hook.event}`,
      args: {
        command: hook.command,
        matcher: hook.matcher,
        ...(options.toolName === undefined ? {} : { for: options.toolName }),
      },
      profile: this.#options.profile,
      mode: this.#options.mode,
      decision: blocked ? "deny" : "allow",
      decidedBy: "hook",
      reason: answer.block ?? answer.ask ?? answer.note ??
        (answer.updatedInput ? "rewrote the tool input" : "no objection"),
      sandbox: confined === undefined ? "none" : confined ? "bwrap" : "none",
      status: answer.note === undefined ? "SUCCEEDED" : "ERROR",
      ...(answer.note === undefined
        ? {}
        : { code: answer.note.includes("timed out") ? "TIMEOUT" : "EXECUTION_FAILED" }),
      ...(exitCode === null ? {} : { exitCode }),
      durationMs: Math.round(ms),
    });
  }
}

/** One hook's answer. */
interface Answer {
  block?: string;
  ask?: string;
  updatedInput?: Record<string, unknown>;
  context?: string;
  stop?: string;
  note?: string;
}

/** The common input plus the tool fields of PreToolUse and PostToolUse. */
export function toolFields(
  toolName: string,
  toolInput: unknown,
  callId: string | undefined,
): Record<string, unknown> {
  return {
    tool_name: claudeToolName(toolName),
    tern_tool_name: toolName,
    tool_input: toolInput,
    ...(callId ? { tool_use_id: callId } : {}),
  };
}

function merge(outcome: HookOutcome, answer: Answer, event: HookEvent): void {
  if (answer.block !== undefined) {
    outcome.block = outcome.block === undefined
      ? answer.block
      : `${outcome.block}\n${answer.block}`;
  }
  if (answer.ask !== undefined) outcome.ask ??= answer.ask;
  if (answer.updatedInput !== undefined && event === "PreToolUse") {
    outcome.updatedInput = answer.updatedInput;
  }
  if (answer.context) outcome.context.push(answer.context);
  if (answer.stop !== undefined) {
    outcome.stop ??= answer.stop;
    // A tool call's hook that stops the agent at least blocks the call.
    if (event === "PreToolUse" && outcome.block === undefined) outcome.block = answer.stop;
  }
  if (answer.note !== undefined) outcome.notes.push(answer.note);
}

/**
 * The shell script that feeds `json` to `command` and prints its stdout, stderr and exit code
 * between `marker`s (random per run). Only bash builtins read the files back, so a hook costs
 * its own process plus `mktemp` and `rm`. A hook that forged the markers could only garble
 * its own answer, which is its to give anyway.
 */
function wrapper(command: string, json: string, marker: string, workspace: string): string {
  // JSON.stringify never writes a newline, so the marker line cannot occur inside the document.
  return [
    `export CLAUDE_PROJECT_DIR=${quote(workspace)} TERN_PROJECT_DIR=${quote(workspace)}`,
    `__d=$(mktemp -d) || exit 97`,
    `bash -c ${quote(command)} >"$__d/o" 2>"$__d/e" <<'${marker}'`,
    json,
    marker,
    `__c=$?`,
    `printf '%s' "${marker}:$(<"$__d/o"):${marker}:$(<"$__d/e"):${marker}:$__c"`,
    `rm -rf "$__d"`,
  ].join("\n");
}

function unwrap(
  output: string,
  marker: string,
): { stdout: string; stderr: string; code: number } | undefined {
  const start = output.indexOf(`${marker}:`);
  const end = output.lastIndexOf(`:${marker}:`);
  const code = /^:[^:]+:(\d+)$/.exec(output.slice(end).trimEnd());
  if (start < 0 || end <= start || code === null) return undefined;
  const both = output.slice(start + marker.length + 1, end);
  const middle = both.indexOf(`:${marker}:`);
  if (middle < 0) return undefined;
  return {
    stdout: both.slice(0, middle),
    stderr: both.slice(middle + marker.length + 2),
    code: Number(code[1]),
  };
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Claude Code's meaning of a hook's exit code and output, for its event. */
function interpret(
  hook: HookCommand,
  ran: { stdout: string; stderr: string; code: number },
): Answer {
  const name = `The ${hook.event} hook "${hook.command}"`;
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
    if (isObject(specific.updatedInput)) answer.updatedInput = specific.updatedInput;
    else answer.note = `${name} gave an updatedInput that is not an object; ignored`;
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

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
