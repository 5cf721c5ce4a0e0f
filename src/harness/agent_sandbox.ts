/**
 * Composition of the sandbox for one run: profile → runtime (tool worker + bubblewrap), then
 * (`agent_gate.ts`) rules, review (person, reviewer model or bypass), secret masking, the audit
 * log, and the gated tools the agent sees. Every front end opens it through the conversation.
 */
import { ConfigError } from "../config/mod.ts";
import { auditDir } from "../sandbox/audit.ts";
import { createSandbox } from "../sandbox/runtime.ts";
import { readEnv } from "./env.ts";
import { personDenials } from "./path_denials.ts";
import { sourceUrl } from "../core/source_url.ts";
import type { AgentSandbox, AgentSandboxOptions } from "./agent_sandbox_types.ts";

export type { AgentSandbox, AgentSandboxOptions, SandboxConfig } from "./agent_sandbox_types.ts";

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
    denials: await personDenials(config.rules),
    ternHome: config.ternHome,
    env: options.env,
    // A variable a profile or a grant names comes from tern's own environment.
    grantedEnv: readEnv,
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
