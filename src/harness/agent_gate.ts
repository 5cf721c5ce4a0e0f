/**
 * The gate's half of an agent sandbox (see `agent_sandbox.ts`): over an open runtime, the rules,
 * the review (person, reviewer model or bypass), secret masking, the audit log, the hooks and
 * the gated tools. A module of its own so that its code loads while the runtime opens.
 */
import { createModelReviewer } from "../agent/auto_reviewer.ts";
import { type GateOptions, PermissionGate } from "../agent/permission_gate.ts";
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
import type { Observation } from "../core/observation.ts";
import type { Tool } from "../tools/define.ts";
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
  // Told once each time the log stops being writable, not at every refused call.
  let told = false;
  const tell = (reason: string) => {
    if (told) return;
    told = true;
    warnPerson(masker.mask(
      `Cannot write the audit log "${path}": ${reason}; no tool call runs until it can be ` +
        "written (free space on its disk, or make its folder writable by tern)",
    ));
  };
  const record = (entry: Parameters<AuditLog["append"]>[0]) => {
    audit.append(entry).catch((error) => tell(error instanceof Error ? error.message : `${error}`));
  };
  // Before every call: a call tern could not record does not run (see `AuditLog.ready`).
  const refusal = async (tool: string): Promise<Observation | undefined> => {
    const failure = await audit.ready();
    if (failure === undefined) {
      told = false;
      return undefined;
    }
    tell(failure);
    return auditRefusal(tool, path, masker.mask(failure));
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
  const gate = new AuditedGate(refusal, {
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
    guarded(createRequestPermissionsTool(gate), refusal),
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
      if (audit.unwritten > 0) {
        warnPerson(
          `${audit.unwritten} audit record(s) of this run were not written to "${path}": ` +
            "the file could not be written until the run ended",
        );
      }
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

/** A call's error when the audit log cannot be written: it did not run. */
function auditRefusal(tool: string, path: string, reason: string): Observation {
  return {
    status: "ERROR",
    code: "EXECUTION_FAILED",
    message: `Cannot run "${tool}": the audit log "${path}" cannot be written (${reason}), and ` +
      "tern runs no tool call it cannot record; the call did not run. Tell the person: they " +
      "can free space on that disk or make that folder writable by tern, and calls run again",
  };
}

/** A gate whose every wrapped tool first checks that the audit log can be written. */
class AuditedGate extends PermissionGate {
  readonly #refusal: (tool: string) => Promise<Observation | undefined>;

  constructor(refusal: (tool: string) => Promise<Observation | undefined>, options: GateOptions) {
    super(options);
    this.#refusal = refusal;
  }

  override wrap(tool: Tool): Tool {
    return guarded(super.wrap(tool), this.#refusal);
  }
}

/** `tool`, refused with the audit log's reason while the log cannot be written. */
function guarded(tool: Tool, refusal: (tool: string) => Promise<Observation | undefined>): Tool {
  return {
    name: tool.name,
    description: tool.description,
    readOnly: tool.readOnly,
    runsIn: tool.runsIn,
    ...(tool.guidance === undefined ? {} : { guidance: tool.guidance }),
    ...(tool.subagentBase ? { subagentBase: true as const } : {}),
    paths: (args) => tool.paths(args),
    ...(tool.network ? { network: (args: unknown) => tool.network!(args) } : {}),
    get parameters() {
      return tool.parameters;
    },
    run: async (args, ctx) => await refusal(tool.name) ?? await tool.run(args, ctx),
  };
}
