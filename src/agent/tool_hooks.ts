/**
 * A tool call's PreToolUse and PostToolUse hooks, fired the same way for every tool: by the
 * permission gate around the tools it wraps, and by the tools that run outside it
 * (request_permissions, the subagent host's spawn_agent and wait_agent through
 * harness/subagents/tool_rules.ts). A hook only tightens: its block refuses, its ask leaves the
 * call to a person, its rewritten input is judged as the model's; what it says is masked and
 * framed before the model or the person sees it.
 */
import type { EmitFn } from "../core/events.ts";
import type { Observation } from "../core/observation.ts";
import type { ReviewMode } from "../config/schema.ts";
import type { AuditRecord } from "../sandbox/audit.ts";
import type { SandboxRuntime } from "../sandbox/runtime.ts";
import type { SecretMasker } from "../sandbox/secrets.ts";
import type { ToolContext } from "../tools/define.ts";
import { hookFrame, type HookOutcome, type HookRunner, toolFields } from "../sandbox/hooks/run.ts";
import { maskObservation } from "./call_facts.ts";

/** What the tool hooks need of the gate's options (`GateOptions` has them all). */
export interface ToolHooksOptions {
  /** The session's hooks; none: no hook runs. */
  hooks?: HookRunner;
  masker: SecretMasker;
  emit: EmitFn;
  /** Receives the record of a call a hook refused; never throws. */
  audit?: (record: AuditRecord) => void;
  session?: string;
  mode: ReviewMode;
  /** For the audit record's profile. */
  runtime: Pick<SandboxRuntime, "profile">;
}

/** What fires a tool call's hooks (see {@linkcode ToolHooks}). */
export type ToolHookCalls = Pick<ToolHooks, "preToolUse" | "postToolUse">;

/** The PreToolUse and PostToolUse hooks of tool calls. */
export class ToolHooks {
  readonly #options: ToolHooksOptions;

  constructor(options: ToolHooksOptions) {
    this.#options = options;
  }

  /**
   * A tool hook's `continue: false`: the turn ends once this call is done, and the person is
   * told the hook's reason (masked: a hook's words may quote the call). The hook's audit record
   * holds the reason too.
   */
  #stopTurn(event: string, reason: string, ctx: ToolContext): void {
    const text = this.#options.masker.mask(reason);
    this.#options.hooks?.tell(`A ${event} hook stopped the turn: ${text}`);
    ctx.stopTurn?.(text);
  }

  /**
   * Fires the PreToolUse hooks matching a call of `name`; undefined when none listens. Their
   * notes are told to the person, `continue: false` ends the turn after the call (the call
   * itself is blocked), and a rewritten input is shown. Whoever runs the call judges the input
   * it runs (`updatedInput`, else `args`) as it judges the model's, the tool's own validation
   * included, and refuses on `block` or has a person decide on `ask` (both masked). Every tool
   * gets them here: the gated ones, and the ones that run outside the gate (request_permissions,
   * the subagent host's).
   */
  async preToolUse(
    name: string,
    args: unknown,
    ctx: ToolContext,
  ): Promise<HookOutcome | undefined> {
    const { hooks, masker, emit } = this.#options;
    if (!hooks?.has("PreToolUse", name)) return undefined;
    const callId = masker.mask(ctx.callId ?? "");
    // A hook is the person's program, but what it is given may end up in its logs: a key the
    // model wrote is masked there as everywhere else (PostToolUse's input is masked too).
    const pre = await hooks.fire("PreToolUse", toolFields(name, masker.maskDeep(args), callId), {
      toolName: name,
      callId,
      signal: ctx.signal,
    });
    // What went wrong with a hook is the person's to know, not only the audit log's.
    for (const note of pre.notes) hooks.tell(masker.mask(note));
    // `continue: false` blocks this call (see `merge`) and ends the turn after it.
    if (pre.stop !== undefined) this.#stopTurn("PreToolUse", pre.stop, ctx);
    if (pre.updatedInput !== undefined) {
      emit({ type: "tool_input", callId, name, args: masker.maskDeep(pre.updatedInput) });
    }
    return {
      ...pre,
      ...(pre.block === undefined ? {} : { block: masker.mask(pre.block) }),
      ...(pre.ask === undefined ? {} : { ask: masker.mask(pre.ask) }),
    };
  }

  /**
   * `observation` (of a call of `name` with `args`) with what the hooks add for the model: when
   * the call `ran` and succeeded, the PostToolUse hooks see its output (masked) and their
   * objection, stop and context follow it; the context of the call's PreToolUse hooks (`pre`)
   * follows in any case. Masked.
   */
  async postToolUse(
    name: string,
    args: unknown,
    observation: Observation,
    ctx: ToolContext,
    options: { pre?: HookOutcome; ran: boolean },
  ): Promise<Observation> {
    const { hooks, masker } = this.#options;
    const { pre, ran } = options;
    observation = maskObservation(observation, masker);
    if (ran && observation.status === "SUCCEEDED" && hooks?.has("PostToolUse", name)) {
      const callId = masker.mask(ctx.callId ?? "");
      const post = await hooks.fire("PostToolUse", {
        ...toolFields(name, masker.maskDeep(args), callId),
        tool_response: { output: observation.output },
      }, { toolName: name, callId, signal: ctx.signal });
      for (const note of post.notes) hooks.tell(masker.mask(note));
      if (post.stop !== undefined) this.#stopTurn("PostToolUse", post.stop, ctx);
      const said = [
        ...post.block === undefined ? [] : [`Objection: ${post.block}`],
        ...post.stop === undefined ? [] : [`The turn was stopped: ${post.stop}`],
        ...post.context,
      ];
      if (said.length > 0) {
        observation = {
          ...observation,
          output: `${observation.output}\n\n${masker.mask(hookFrame("POSTTOOLUSE HOOK", said))}`,
        };
      }
    }
    if (pre !== undefined && pre.context.length > 0) {
      const text = masker.mask(hookFrame("PRETOOLUSE HOOK", pre.context));
      observation = observation.status === "SUCCEEDED"
        ? { ...observation, output: `${observation.output}\n\n${text}` }
        : { ...observation, message: `${observation.message}\n\n${text}` };
    }
    return observation;
  }

  /**
   * The refusal of a call of `name` (one that runs outside the gate) a PreToolUse hook blocked,
   * audited as the gate audits its own: the hook decided.
   */
  refusedByHook(name: string, args: unknown, block: string, ctx: ToolContext): Observation {
    const { masker, runtime } = this.#options;
    const reason = masker.mask(`A PreToolUse hook blocked this: ${block}`);
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      ...(this.#options.session ? { session: this.#options.session } : {}),
      callId: masker.mask(ctx.callId ?? ""),
      tool: name,
      args: masker.maskDeep(args),
      profile: runtime.profile.name,
      mode: this.#options.mode,
      decision: "deny",
      decidedBy: "hook",
      reason,
      sandbox: "none",
      status: "ERROR",
      code: "POLICY_DENIED",
      durationMs: 0,
    });
    return { status: "ERROR", code: "POLICY_DENIED", message: reason };
  }
}
