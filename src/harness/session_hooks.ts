/**
 * The session-level lifecycle hooks of a conversation: SessionStart, UserPromptSubmit, Stop,
 * SessionEnd and Notification (PreToolUse and PostToolUse run at the permission gate). The
 * hook settings are read once per conversation; the sandbox is opened only for an event that
 * has hooks, so a conversation without hooks pays nothing. `toolHookGate` does the same for the
 * tools that run outside the gate (the subagent host's).
 */
import type { ToolHookCalls } from "../agent/tool_hooks.ts";
import { warningLine } from "../core/warnings.ts";
import { type HookCommand, type HookEvent, matches } from "../sandbox/hooks/config.ts";
import { hookFrame, type HookOutcome } from "../sandbox/hooks/run.ts";
import type { AgentSandbox } from "./agent_sandbox.ts";

/**
 * The most seconds SessionEnd hooks may hold up a session's close (a hook's own `timeout` is
 * cut to it): closing is never left waiting on a hook for long. Claude Code gives them 1.5 s;
 * here a hook's sandbox must start first.
 */
export const SESSION_END_MAX_S = 10;

/** Why SessionEnd hooks stopped when the close's signal fired. */
const CLOSE_CUT = "tern was closing and was interrupted";

/** What a prompt becomes after SessionStart and UserPromptSubmit hooks. */
export type PromptOutcome =
  | { blocked: false; text: string }
  | { blocked: true; reason: string };

/** The session-level hooks of one conversation. */
export class SessionHooks {
  readonly #list: Promise<readonly HookCommand[]>;
  readonly #sandbox: () => Promise<AgentSandbox>;
  #started = false;

  constructor(list: Promise<readonly HookCommand[]>, sandbox: () => Promise<AgentSandbox>) {
    this.#list = list;
    this.#sandbox = sandbox;
  }

  /** The trusted hooks (for the sandbox's gate). */
  list(): Promise<readonly HookCommand[]> {
    return this.#list;
  }

  /**
   * Runs the hooks of `event`, stopped with `signal`; undefined when it has none. SessionEnd
   * hooks (at a close) run at most {@linkcode SESSION_END_MAX_S} seconds, and `signal` (the
   * front end's: a second Ctrl-C, a shutdown) stops them at once, each noted to the person:
   * nothing may keep tern from closing.
   */
  async fire(
    event: HookEvent,
    fields: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<HookOutcome | undefined> {
    if (!(await this.#list).some((hook) => hook.event === event)) return undefined;
    const sandbox = await this.#sandbox();
    const closing = event === "SessionEnd";
    const outcome = await sandbox.hooks?.fire(event, fields, {
      signal: closing && signal !== undefined ? closeSignal(signal) : signal,
      ...(closing ? { maxTimeoutS: SESSION_END_MAX_S } : {}),
    });
    if (outcome === undefined) return undefined;
    // What reaches the model or the screen never carries a key tern knows of.
    const { masker } = sandbox.gate.options;
    // What went wrong with a hook is the person's to know, not only the audit log's.
    for (const note of outcome.notes) sandbox.hooks?.tell(masker.mask(note));
    return {
      ...outcome,
      context: outcome.context.map((text) => masker.mask(text)),
      ...(outcome.block === undefined ? {} : { block: masker.mask(outcome.block) }),
    };
  }

  /**
   * The text of the person's prompt with the context SessionStart (first prompt of the
   * conversation) and UserPromptSubmit hooks add, or the reason a UserPromptSubmit hook
   * blocked it (exit code 2, `decision: "block"`, `continue: false`).
   */
  async prompt(task: string, resumed: boolean, signal?: AbortSignal): Promise<PromptOutcome> {
    const context: string[] = [];
    if (!this.#started) {
      this.#started = true;
      const start = await this.fire(
        "SessionStart",
        { source: resumed ? "resume" : "startup" },
        signal,
      );
      context.push(...start?.context ?? []);
    }
    const submit = await this.fire("UserPromptSubmit", { prompt: task }, signal);
    if (submit?.block !== undefined || submit?.stop !== undefined) {
      // The person is shown it as tern's own line (`tern: CANCELLED: …`): the hook's words are
      // kept to that line, so a line break in them cannot start one that passes for tern's.
      const why = warningLine(submit.block ?? submit.stop ?? "");
      return { blocked: true, reason: `A UserPromptSubmit hook blocked this prompt: ${why}` };
    }
    context.push(...submit?.context ?? []);
    if (context.length === 0) return { blocked: false, text: task };
    return { blocked: false, text: `${task}\n\n${hookFrame("HOOK CONTEXT", context)}` };
  }

  /**
   * Asked when the model would end the turn: a Stop hook that blocks (exit code 2 or
   * `decision: "block"`) gives the reason the turn goes on with. `again` is Claude Code's
   * `stop_hook_active`: the turn already went on because of a Stop hook.
   */
  async stop(again: boolean, signal?: AbortSignal): Promise<string | undefined> {
    const outcome = await this.fire("Stop", { stop_hook_active: again }, signal);
    if (outcome?.block === undefined || outcome.stop !== undefined) return undefined;
    return hookFrame("STOP HOOK", [`The work is not finished: ${outcome.block}`]);
  }
}

/**
 * `signal`, with the reason the person reads in the note of a SessionEnd hook it stopped (a
 * front end's own reason, if any, is about its turn, not the close).
 */
function closeSignal(signal: AbortSignal): AbortSignal {
  if (signal.aborted) return AbortSignal.abort(CLOSE_CUT);
  const controller = new AbortController();
  signal.addEventListener("abort", () => controller.abort(CLOSE_CUT), { once: true });
  return controller.signal;
}

/** What fires a tool call's hooks: the gate's code. */
export type ToolHookGate = ToolHookCalls;

/**
 * For the tools that run outside the gate (the subagent host's): the gate that fires the hooks
 * of `event` for `toolName`, or undefined when none listens. `hooks` are the conversation's
 * (`Conversation.activeHooks`), so a call no hook names never waits for the sandbox to open;
 * `sandbox` opens it otherwise. When it cannot open, a PreToolUse hook could not run, and blocks
 * (a guard never passes because it did not start).
 */
export function toolHookGate(
  hooks: () => Promise<readonly HookCommand[]> | undefined,
  sandbox: () => Promise<AgentSandbox> | undefined,
): (event: HookEvent, toolName: string) => Promise<ToolHookGate | undefined> {
  return async (event, toolName) => {
    const named = (await hooks() ?? []).some((hook) =>
      hook.event === event && matches(hook.matcher, toolName)
    );
    if (!named) return undefined;
    let failure = "the sandbox is not open";
    const opened = await sandbox()?.catch((error) => {
      failure = error instanceof Error ? error.message : String(error);
      return undefined;
    });
    if (opened !== undefined) return opened.hooks?.has(event, toolName) ? opened.gate : undefined;
    if (event !== "PreToolUse") return undefined;
    const block = `the PreToolUse hooks of "${toolName}" could not run: ${failure}`;
    return {
      preToolUse: () => Promise.resolve({ block, context: [], notes: [] }),
      postToolUse: (_name, _args, observation) => Promise.resolve(observation),
    };
  };
}
