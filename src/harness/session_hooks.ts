/**
 * The session-level lifecycle hooks of a conversation: SessionStart, UserPromptSubmit, Stop,
 * SessionEnd and Notification (PreToolUse and PostToolUse run at the permission gate). The
 * hook settings are read once per conversation; the sandbox is opened only for an event that
 * has hooks, so a conversation without hooks pays nothing.
 */
import type { HookCommand, HookEvent } from "../sandbox/hooks/config.ts";
import { hookFrame, type HookOutcome } from "../sandbox/hooks/run.ts";
import type { AgentSandbox } from "./agent_sandbox.ts";

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

  /** Runs the hooks of `event`; undefined when it has none. */
  async fire(
    event: HookEvent,
    fields: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<HookOutcome | undefined> {
    if (!(await this.#list).some((hook) => hook.event === event)) return undefined;
    const sandbox = await this.#sandbox();
    const outcome = await sandbox.hooks?.fire(event, fields, { signal });
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
      return {
        blocked: true,
        reason: `A UserPromptSubmit hook blocked this prompt: ${submit.block ?? submit.stop}`,
      };
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
