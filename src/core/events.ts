/** Everything the agent does, as one discriminated union. Front ends only consume these. */
import type { AssistantMessage, Usage } from "./messages.ts";
import type { Observation } from "./observation.ts";

/** How a turn ended. See ARCHITECTURE.md for the exact meaning of each. */
export type ExitReason =
  | "COMPLETED"
  | "MAX_ROUNDS"
  | "REPEATED_FAILURE"
  | "EMPTY_RESPONSE"
  | "LENGTH_LIMIT"
  | "CLIENT_ERROR"
  | "CANCELLED";

export type AgentEvent =
  | { type: "turn_start"; model: string; maxRounds: number }
  | { type: "round_start"; round: number }
  | { type: "text_delta"; round: number; text: string }
  /** Readable model reasoning as it streams (never part of the answer). */
  | { type: "thinking_delta"; round: number; text: string }
  /** A model call failed and is tried again after `delayMs`: its partial text is void. */
  | { type: "retry"; round: number; attempt: number; delayMs: number; reason: string }
  /** The fallback chain moved on: `to` (`provider/model`) answers from now on in this run. */
  | {
    type: "model_switch";
    round: number;
    from: string;
    to: string;
    provider: string;
    model: string;
    reason: string;
  }
  | {
    type: "assistant_message";
    round: number;
    message: AssistantMessage;
    usage?: Usage;
    /** USD, when the model's prices are known. */
    cost?: number;
  }
  | {
    type: "tool_start";
    round: number;
    callId: string;
    name: string;
    /** Parsed arguments, or the raw text when they were not valid JSON. */
    args: unknown;
    readOnly: boolean;
  }
  | { type: "tool_update"; callId: string; text: string }
  /**
   * A PreToolUse hook replaced a call's arguments: `args` run instead of those `tool_start`
   * showed (the person must see what runs, not what the model asked for).
   */
  | { type: "tool_input"; callId: string; name: string; args: unknown }
  /** A message the person typed while the turn ran, added before the next model call. */
  | { type: "steering"; round: number; text: string }
  | {
    type: "permission_request";
    callId: string;
    name: string;
    /** The command, or the tool and its path; secrets masked. */
    summary: string;
    reason: string;
  }
  | {
    type: "permission_decision";
    callId: string;
    allow: boolean;
    by: "person" | "reviewer" | "bypass" | "policy";
    reason: string;
  }
  | {
    type: "tool_end";
    round: number;
    callId: string;
    name: string;
    observation: Observation;
    durationMs: number;
  }
  | {
    type: "compaction";
    /** Estimated tokens of the conversation before and after. */
    tokensBefore: number;
    tokensAfter: number;
    /** Messages the summary replaced. */
    summarised: number;
    /** True when the summary model call failed and a deterministic summary was used. */
    fallback: boolean;
    error?: string;
    /** Images of the summarised messages, dropped (the summary says so); absent for none. */
    imagesDropped?: number;
  }
  | {
    type: "turn_end";
    exitReason: ExitReason;
    text: string;
    rounds: number;
    toolCalls: number;
    usage: Usage;
    /** USD for the turn's calls whose prices are known; absent when none were. */
    cost?: number;
    /** USD the prompt cache saved over the turn's priced calls (cacheSavingsOf). */
    saved?: number;
    /** Human-readable detail for every exit reason but COMPLETED. */
    error?: string;
    /**
     * Workspace files that run code on the host later (`.envrc`, git hooks, package scripts,
     * a new repository, ...) the turn created, changed or removed: the person should know.
     */
    hostFiles?: HostFileNotes;
  }
  /**
   * The background processes were stopped (their sandbox closes: the session ends, a mode,
   * profile or model change reopens it, `tern run` finishes) and had changed these host-run
   * files since the last turn's end, which no turn will report: the person should know.
   */
  | { type: "background_host_files"; hostFiles: HostFileNotes };

/** Changes to workspace files that run code on the host later, for the person. */
export type HostFileNotes = Array<
  { path: string; change: "created" | "changed" | "removed"; runs: string }
>;

/** A consumer of agent events. Must not throw; it is called synchronously on the hot path. */
export type EmitFn = (event: AgentEvent) => void;
