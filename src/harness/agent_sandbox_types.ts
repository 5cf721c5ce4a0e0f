/**
 * The types of an agent sandbox (see `agent_sandbox.ts`, which opens one, and `agent_gate.ts`,
 * its gate's half): a module of their own, so that the two halves import neither each other's
 * code nor each other.
 */
import type { TurnLease } from "../agent/turn_lease.ts";
import type { TernConfig } from "../config/mod.ts";
import type { EmitFn } from "../core/events.ts";
import type { PermissionGate } from "../agent/permission_gate.ts";
import type { Provider } from "../llm/types.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import type { SandboxRuntime } from "../sandbox/runtime.ts";
import type { PermissionChange } from "../session/types.ts";
import type { BuiltinLoader } from "../tools/mod.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { HookCommand } from "../sandbox/hooks/config.ts";
import type { HookRunner } from "../sandbox/hooks/run.ts";
import type { AuditRecord } from "../sandbox/audit.ts";

export type SandboxConfig =
  & Pick<
    TernConfig,
    | "profile"
    | "profiles"
    | "mode"
    | "noSandbox"
    | "rules"
    | "ternHome"
    | "apiKey"
    | "model"
    | "reviewModel"
    | "reviewTimeoutMs"
  >
  & Partial<
    Pick<
      TernConfig,
      "apiKeys" | "limits" | "sandbox" | "autoNetwork" | "autoAskRules" | "serverChosenBy"
    >
  >;

export interface AgentSandboxOptions {
  config: SandboxConfig;
  /** The turns that share the sandbox (the conversation's: see turn_lease.ts). */
  turnLease?: TurnLease;
  workspace: string;
  /** Reads an environment variable tern may see (for the shell's allowlisted variables). */
  env: Readonly<Record<string, string>>;
  home?: string;
  emit: EmitFn;
  /** Asks the person at the terminal; absent when the run is not interactive. */
  person?: AskPerson;
  /** The provider the AUTO reviewer calls. */
  provider: Provider;
  /** The user's task, for the reviewer. */
  goal: () => string;
  /**
   * What the reviewer is shown beside the call as untrusted context (a subagent's task, which
   * its parent's model wrote); none when it returns undefined.
   */
  recent?: () => string | undefined;
  loadTools: BuiltinLoader;
  /** Start the tool worker now, while the first model request is in flight. */
  warm?: boolean;
  /** Gives up an opening no longer wanted: nothing it made is left, and it rejects. */
  signal?: AbortSignal;
  /** The rules, already compiled (`checkSandboxConfig`); compiled here when absent. */
  rules?: CompiledRule[];
  /** Folders the file tools may read whatever the profile (the session's saved results). */
  extraRead?: string[];
  /** Approvals and grants of a resumed session; grants are decided again (`gate.restore`). */
  permissions?: readonly PermissionChange[];
  /** Told of each approval or grant that lasts for the session. */
  onPermissionChange?: (change: PermissionChange) => void;
  /** The session id audit records carry (default: the run id). */
  sessionId?: string;
  /** More secret values to mask besides the API keys (those given to MCP servers). */
  secrets?: readonly string[];
  /** The trusted lifecycle hooks (`hooks/load.ts`); none when absent. */
  hooks?: readonly HookCommand[];
  /** The session file, for the hooks' `transcript_path`. */
  transcriptPath?: string;
}

export interface AgentSandbox {
  tools: ToolRegistry;
  gate: PermissionGate;
  /** The lifecycle hooks, run in this sandbox's shell (absent without hooks). */
  hooks?: HookRunner;
  runtime: SandboxRuntime;
  /** This run's audit log file. */
  auditPath: string;
  /** Appends a record to it (a call decided outside the gate: the subagent host's tools). */
  audit(record: AuditRecord): void;
  /** Stops the worker, removes the private tmp directory, flushes the audit log. */
  close(): Promise<void>;
}
