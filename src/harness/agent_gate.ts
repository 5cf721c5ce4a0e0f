/**
 * The gate's half of an agent sandbox (see `agent_sandbox.ts`): over an open runtime, the rules,
 * the review (person, reviewer model or bypass), secret masking, the audit log, the hooks and
 * the gated tools. A module of its own so that its code loads while the runtime opens.
 */
import { createModelReviewer } from "../agent/auto_reviewer.ts";
import { PermissionGate } from "../agent/permission_gate.ts";
import { createRequestPermissionsTool } from "../agent/request_permissions.ts";
import { AuditLog, auditPath } from "../sandbox/audit.ts";
import { compileRules } from "../sandbox/rules.ts";
import type { SandboxRuntime } from "../sandbox/runtime.ts";
import { SecretMasker } from "../sandbox/secrets.ts";
import { builtinTools } from "../tools/mod.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { HookRunner } from "../sandbox/hooks/run.ts";
import { warnPerson } from "../core/warnings.ts";
import { readEnv } from "./env.ts";
import type { AgentSandbox, AgentSandboxOptions } from "./agent_sandbox_types.ts";
import type { Reviewer } from "../sandbox/review.ts";
import { type ConfigSource, describeSource } from "../config/sources.ts";

/** The gate, the audit log and the gated tools over an open `runtime`. */
export async function withRuntime(
  runtime: SandboxRuntime,
  options: AgentSandboxOptions,
  runId: string,
): Promise<AgentSandbox> {
  const { config } = options;
  const rules = options.rules ??
    (config.rules.length > 0 ? await compileRules(config.rules) : []);
  // Every key tern knows of is masked in the audit log, not only the one in use.
  const keys = [config.apiKey, ...Object.values(config.apiKeys ?? {}), ...options.secrets ?? []];
  const masker = new SecretMasker(keys.filter((key): key is string => key !== undefined));
  const path = auditPath(config.ternHome, runId);
  const audit = await AuditLog.open(path, { masker });
  const reviewer = config.mode !== "auto"
    ? undefined
    : config.serverChosenBy !== undefined
    ? refusingReviewer(config.serverChosenBy)
    : createModelReviewer({
      provider: options.provider,
      model: config.reviewModel ?? config.model,
      goal: options.goal,
      recent: options.recent,
    });
  const record = (entry: Parameters<AuditLog["append"]>[0]) => {
    audit.append(entry).catch((error) => {
      warnPerson(`Cannot write the audit log "${path}": ${error}`);
    });
  };
  const hooks = options.hooks?.length
    ? new HookRunner({
      hooks: options.hooks,
      // Hooks run only in bubblewrap, never on the host: not under `:danger-full-access` or
      // `--no-sandbox` either, where the agent's own commands do.
      shell: () =>
        runtime.shellKind === "bwrap"
          ? { run: runtime.shell, confined: true }
          : runtime.shellNote ?? "shell commands are not confined here",
      // A hook's stderr line (a program not found) may quote its input: masked as its notes are.
      warn: (text) => warnPerson(masker.mask(text)),
      workspace: options.workspace,
      sessionId: options.sessionId ?? runId,
      transcriptPath: options.transcriptPath ?? "",
      audit: record,
      profile: runtime.profile.name,
      mode: config.mode,
    })
    : undefined;
  const gate = new PermissionGate({
    runtime,
    rules,
    mode: config.mode,
    person: options.person,
    reviewer,
    reviewTimeoutMs: config.reviewTimeoutMs,
    autoNetwork: config.autoNetwork,
    autoAskRules: config.autoAskRules,
    masker,
    emit: options.emit,
    audit: record,
    session: options.sessionId ?? runId,
    onPermissionChange: options.onPermissionChange,
    ...(hooks ? { hooks } : {}),
    // Where the sandbox reads a granted variable (agent_sandbox.ts's `grantedEnv`).
    envValue: readEnv,
    ...(options.turnLease === undefined ? {} : { turnLease: options.turnLease }),
  });
  if (options.permissions?.length) await gate.restore(options.permissions);
  const tools = new ToolRegistry([
    ...builtinTools(options.loadTools).map((tool) => gate.wrap(tool)),
    createRequestPermissionsTool(gate),
  ]);
  return {
    tools,
    gate,
    ...(hooks ? { hooks } : {}),
    runtime,
    auditPath: path,
    audit: record,
    async close() {
      await runtime.close();
      await audit.close();
    },
  };
}

/**
 * The AUTO reviewer when a project's file chose the model server (`serverChosenBy`): the
 * reviewer's model would be on that same server, so whoever runs it would approve its own
 * model's calls and grants. It decides nothing; each call it would review goes to the person,
 * or is denied when nobody can be asked.
 */
function refusingReviewer(chooser: ConfigSource): Reviewer {
  const why = `the model server was chosen by ${describeSource(chooser)}, and a server a ` +
    "project chose does not review its own model's calls: run with --mode ask, or choose the " +
    "server yourself (--base-url) for a reviewer";
  return () => Promise.reject(new Error(why));
}
