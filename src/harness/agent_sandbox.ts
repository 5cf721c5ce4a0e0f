/**
 * Composition of the sandbox for one run: profile → runtime (tool worker + bubblewrap), then
 * (`agent_gate.ts`) rules, review (person, reviewer model or bypass), secret masking, the audit
 * log, and the gated tools the agent sees. Every front end opens it through the conversation.
 */
import { ConfigError, type TernConfig } from "../config/mod.ts";
import type { EmitFn } from "../core/events.ts";
import type { PermissionGate } from "../agent/permission_gate.ts";
import type { Provider } from "../llm/types.ts";
import { auditDir } from "../sandbox/audit.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import { createSandbox, type SandboxRuntime } from "../sandbox/runtime.ts";
import type { PermissionChange } from "../session/types.ts";
import type { BuiltinLoader } from "../tools/mod.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { sourceUrl } from "../core/source_url.ts";
import type { HookCommand } from "../sandbox/hooks/config.ts";
import type { HookRunner } from "../sandbox/hooks/run.ts";

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
  & Partial<Pick<TernConfig, "apiKeys" | "limits" | "sandbox">>;

export interface AgentSandboxOptions {
  config: SandboxConfig;
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
  /** Stops the worker, removes the private tmp directory, flushes the audit log. */
  close(): Promise<void>;
}

/** Builds the sandbox and the gated tools. @throws {ConfigError} for a bad rule or profile. */
export async function openAgentSandbox(options: AgentSandboxOptions): Promise<AgentSandbox> {
  const { config, workspace } = options;
  const runId = newRunId();
  // The gate's half (the policy, the reviewer, the rules' matcher, the tools' registry) loads
  // while the sandbox opens: its processes and files then wait beside that code, not after it.
  const gateCode = import("./agent_gate.ts");
  gateCode.catch(() => {});
  const runtime = await createSandbox({
    workspace,
    profile: config.profile,
    custom: config.profiles,
    limits: config.limits,
    noSandbox: config.noSandbox,
    home: options.home,
    homeAllow: config.sandbox?.homeAllow,
    ternHome: config.ternHome,
    env: options.env,
    handlerUrl: sourceUrl("src/tools/worker_handler.ts"),
    auditDir: auditDir(config.ternHome),
    runId,
    warm: options.warm,
    extraRead: options.extraRead,
    signal: options.signal,
  }).catch((error) => {
    // An unknown profile name is a configuration mistake, reported with the known names.
    if (error instanceof RangeError) throw new ConfigError(error.message, { key: "profile" });
    throw error;
  });
  try {
    const { withRuntime } = await gateCode;
    return await withRuntime(runtime, options, runId);
  } catch (error) {
    // Nothing of a sandbox that could not be completed stays open (its warm shell, its worker).
    await runtime.close();
    throw error;
  }
}

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const random = crypto.getRandomValues(new Uint8Array(3));
  return `${stamp}-${[...random].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
