/**
 * The permission gate: the one orchestrator every tool call passes through, outside the tool
 * body. Per call: analyse → policy (rules, profile, classifier) → review when the policy says
 * "ask" → run confined (tool worker, or bubblewrap through `ctx.shell`) → mask secrets →
 * audit. Tools stay unaware of it; the gate wraps them.
 */
import type { EmitFn } from "../core/events.ts";
import type { Observation } from "../core/observation.ts";
import type { ReviewMode } from "../config/schema.ts";
import type { AuditRecord } from "../sandbox/audit.ts";
import type { HostFileChange } from "../sandbox/persistence.ts";
import { approvalKey, type CallFacts, evaluate, type Verdict } from "../sandbox/policy.ts";
import {
  type AskPerson,
  review,
  type Reviewer,
  type ReviewOutcome,
  type ReviewRequest,
} from "../sandbox/review.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import type { SandboxRuntime } from "../sandbox/runtime.ts";
import { createStreamMasker, type SecretMasker } from "../sandbox/secrets.ts";
import type { Tool, ToolContext } from "../tools/define.ts";
import type { PermissionChange } from "../session/types.ts";
import { analyseCall, fileRoots, maskObservation, reviewRequestFor } from "./call_facts.ts";

/** Tools whose file work runs in the confined worker when there is one. */
const WORKER_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "write",
  "edit",
  "list",
  "glob",
  "grep",
]);

/** What request_permissions asks for, normalised (absolute paths, two-word prefixes). */
export interface GrantRequest {
  read: string[];
  write: string[];
  net: string[];
  env: string[];
  commands: string[];
  withoutSandbox: boolean;
}

interface Grant {
  extra: { read: string[]; write: string[]; net: string[]; env: string[] };
  keys: string[];
  withoutSandbox: boolean;
}

export interface GateOptions {
  runtime: SandboxRuntime;
  rules: readonly CompiledRule[];
  mode: ReviewMode;
  person?: AskPerson;
  reviewer?: Reviewer;
  reviewTimeoutMs: number;
  masker: SecretMasker;
  emit: EmitFn;
  /** Receives one record per call; never throws (audit failures are reported, not fatal). */
  audit?: (record: AuditRecord) => void;
  session?: string;
  /** Told of every approval or grant that lasts for the session, to record it. */
  onPermissionChange?: (change: PermissionChange) => void;
}

/** Approvals and grants that last for the session, shared by every gated tool. */
export class PermissionGate {
  readonly #options: GateOptions;
  readonly sessionApprovals = new Set<string>();

  constructor(options: GateOptions) {
    this.#options = options;
  }

  get options(): GateOptions {
    return this.#options;
  }

  /** `tool`, with every call passing through the gate. */
  wrap(tool: Tool): Tool {
    return {
      name: tool.name,
      description: tool.description,
      readOnly: tool.readOnly,
      get parameters() {
        return tool.parameters;
      },
      run: (args, ctx) => this.#run(tool, args, ctx),
    };
  }

  /** What the policy says about a call, without running or reviewing it. */
  async decide(tool: Pick<Tool, "name" | "readOnly">, args: unknown): Promise<{
    facts: CallFacts;
    verdict: Verdict;
  }> {
    const facts = await analyseCall(tool, args, this.#options.runtime.workspace);
    const verdict = evaluate(facts, {
      profile: this.#options.runtime.profile,
      rules: this.#options.rules,
      sessionApprovals: new Set([...this.sessionApprovals, ...this.#grantedKeys]),
    });
    return { facts, verdict };
  }

  /** Reviews a request that is not a tool call (request_permissions). */
  async reviewRequest(request: ReviewRequest, signal: AbortSignal, options: {
    needsJudge?: boolean;
  } = {}) {
    const { mode, person, reviewer, reviewTimeoutMs } = this.#options;
    if (options.needsJudge && mode === "bypass") {
      return {
        allow: false,
        by: "policy" as const,
        reason: "Running without the sandbox needs a person or the reviewer: use --mode ask " +
          "or --mode auto",
        remember: false,
      };
    }
    return await review(request, { mode, person, reviewer, reviewTimeoutMs, signal });
  }

  /**
   * Reviews a request for more permissions and, when granted, widens the sandbox: paths, hosts
   * and env through the runtime (the worker restarts with the new flags), command prefixes as
   * approvals. Running without the sandbox always needs a person or the reviewer. Audited.
   */
  async requestGrant(request: GrantRequest, options: {
    scope: "turn" | "session";
    reason: string;
    summary: string;
    callId: string;
    signal: AbortSignal;
  }): Promise<ReviewOutcome> {
    const { emit, runtime, masker } = this.#options;
    const started = performance.now();
    const review: ReviewRequest = {
      tool: "request_permissions",
      args: masker.maskDeep(request),
      summary: masker.mask(options.summary),
      reason: `The model asks: ${masker.mask(options.reason)}`,
      profile: runtime.profile.name,
      rememberable: false,
    };
    emit({
      type: "permission_request",
      callId: options.callId,
      name: "request_permissions",
      summary: review.summary,
      reason: review.reason,
    });
    const outcome = await this.reviewRequest(review, options.signal, {
      needsJudge: request.withoutSandbox,
    });
    emit({
      type: "permission_decision",
      callId: options.callId,
      allow: outcome.allow,
      by: outcome.by,
      reason: outcome.reason,
    });
    if (outcome.allow) {
      const grant: Grant = {
        extra: { read: request.read, write: request.write, net: request.net, env: request.env },
        keys: request.commands.map((prefix) => `bash:${prefix}`),
        withoutSandbox: request.withoutSandbox,
      };
      (options.scope === "session" ? this.#sessionGrants : this.#turnGrants).push(grant);
      if (options.scope === "session") {
        this.#options.onPermissionChange?.({ kind: "grant", ...grant });
      }
      await this.#apply();
    }
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      ...(this.#options.session ? { session: this.#options.session } : {}),
      callId: options.callId,
      tool: "request_permissions",
      args: masker.maskDeep({ ...request, scope: options.scope, reason: options.reason }),
      profile: runtime.profile.name,
      mode: this.#options.mode,
      decision: outcome.allow ? "allow" : "deny",
      decidedBy: outcome.by,
      reason: outcome.reason,
      sandbox: "none",
      status: outcome.allow ? "SUCCEEDED" : "ERROR",
      ...(outcome.allow ? {} : { code: "POLICY_DENIED" }),
      durationMs: Math.round(performance.now() - started),
    });
    return outcome;
  }

  /**
   * Restores the session's approvals and grants from a resumed session, without review (they
   * were reviewed when given). Widens the sandbox once.
   */
  async restore(changes: readonly PermissionChange[]): Promise<void> {
    for (const change of changes) {
      if (change.kind === "approval") this.sessionApprovals.add(change.key);
      else {
        const { extra, keys, withoutSandbox } = change;
        this.#sessionGrants.push({ extra, keys, withoutSandbox });
      }
    }
    if (this.#sessionGrants.length > 0) await this.#apply();
  }

  /** Drops what was granted for this turn only. */
  async endTurn(): Promise<void> {
    if (this.#turnGrants.length === 0) return;
    this.#turnGrants = [];
    await this.#apply();
  }

  #sessionGrants: Grant[] = [];
  #turnGrants: Grant[] = [];

  async #apply(): Promise<void> {
    const grants = [...this.#sessionGrants, ...this.#turnGrants];
    this.#grantedKeys = new Set(grants.flatMap((g) => g.keys));
    this.#unsandboxedKeys = new Set(grants.filter((g) => g.withoutSandbox).flatMap((g) => g.keys));
    const union = (pick: (g: Grant) => readonly string[]) => [
      ...new Set(grants.flatMap(pick)),
    ];
    await this.#options.runtime.setExtraGrants({
      read: union((g) => g.extra.read),
      write: union((g) => g.extra.write),
      net: union((g) => g.extra.net),
      env: union((g) => g.extra.env),
    });
  }

  #hostFiles: HostFileChange[] = [];

  /**
   * The changes to files that run code on the host (see `persistence.ts`) since the last
   * call, once each path (its last change), and forgets them: for the turn's summary.
   */
  takeHostFileChanges(): HostFileChange[] {
    const last = new Map(this.#hostFiles.map((change) => [change.path, change]));
    this.#hostFiles = [];
    return [...last.values()];
  }

  #grantedKeys = new Set<string>();
  #unsandboxedKeys = new Set<string>();

  async #run(tool: Tool, args: unknown, ctx: ToolContext): Promise<Observation> {
    const { runtime, masker, emit } = this.#options;
    const callId = ctx.callId ?? "";
    const started = performance.now();
    const decided = await this.decide(tool, args);
    const { facts } = decided;
    let verdict = decided.verdict;
    // Without bubblewrap a command would run unconfined: never silently, whatever allowed it.
    const unconfined = tool.name === "bash" && runtime.shellKind === "unavailable";
    if (unconfined && verdict.action !== "deny") {
      verdict = {
        action: "ask",
        by: "profile",
        reason: `The command would run WITHOUT a sandbox: ${runtime.shellNote}`,
      };
    }
    let decidedBy: AuditRecord["decidedBy"] = verdict.by === "default" ? "policy" : verdict.by;
    let reason = verdict.reason;
    let allowed = verdict.action === "allow";
    if (verdict.action === "ask") {
      const request = reviewRequestFor(
        tool.name,
        args,
        facts,
        verdict,
        runtime.profile.name,
        masker,
      );
      emit({
        type: "permission_request",
        callId,
        name: tool.name,
        summary: request.summary,
        reason,
      });
      const outcome = await this.reviewRequest(request, ctx.signal, { needsJudge: unconfined });
      allowed = outcome.allow;
      decidedBy = outcome.by;
      reason = outcome.reason;
      const key = approvalKey(facts);
      if (outcome.allow && outcome.remember && key !== undefined) {
        this.sessionApprovals.add(key);
        this.#options.onPermissionChange?.({ kind: "approval", key });
      }
      emit({ type: "permission_decision", callId, allow: allowed, by: outcome.by, reason });
    }
    let observation: Observation;
    let sandbox: AuditRecord["sandbox"] = "none";
    // Files that run code on the host later, compared around every call that may write.
    const watch = allowed && !tool.readOnly ? runtime.watchHostFiles() : undefined;
    // Streamed output reaches the screen too: mask it on the way, holding back a little so a
    // key split across two pieces is still caught.
    const stream = createStreamMasker(masker);
    const update = ctx.update === undefined ? undefined : (text: string) => {
      const shown = stream.push(text);
      if (shown !== "") ctx.update!(shown);
    };
    if (!allowed) {
      observation = { status: "ERROR", code: "POLICY_DENIED", message: reason };
    } else if (WORKER_TOOLS.has(tool.name) && runtime.worker !== undefined) {
      sandbox = "worker";
      observation = await runtime.worker.call(tool.name, args, {
        signal: ctx.signal,
        onUpdate: update,
        roots: fileRoots(runtime.profile.grants),
      });
    } else {
      const key = approvalKey(facts);
      const free = key !== undefined && this.#unsandboxedKeys.has(key);
      const shell = free ? runtime.unsandboxedShell : runtime.shell;
      sandbox = tool.name.startsWith("mcp__")
        ? "mcp"
        : tool.name !== "bash"
        ? "in-process"
        : free || runtime.shellKind !== "bwrap"
        ? "none"
        : "bwrap";
      observation = await tool.run(args, {
        ...ctx,
        update,
        shell,
        roots: fileRoots(runtime.profile.grants),
      });
      if (tool.name === "bash" && !facts.shell?.readOnly) runtime.shellTreeChanged();
    }
    const rest = stream.flush();
    if (rest !== "") ctx.update?.(rest);
    observation = maskObservation(observation, masker);
    const hostFiles = watch ? await watch() : [];
    this.#hostFiles.push(...hostFiles);
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      ...(this.#options.session ? { session: this.#options.session } : {}),
      callId,
      tool: tool.name,
      args: masker.maskDeep(args),
      profile: runtime.profile.name,
      mode: this.#options.mode,
      decision: allowed ? "allow" : "deny",
      decidedBy,
      ...(verdict.rule ? { rule: verdict.rule } : {}),
      reason,
      sandbox,
      status: observation.status,
      ...(observation.status === "ERROR" ? { code: observation.code } : {}),
      ...(observation.status === "SUCCEEDED" && observation.details?.kind === "command"
        ? { exitCode: observation.details.exitCode }
        : {}),
      durationMs: Math.round(performance.now() - started),
      ...(sandbox === "worker" && runtime.worker?.auditPath
        ? { denoAudit: runtime.worker.auditPath }
        : {}),
      ...(hostFiles.length > 0 ? { hostFiles } : {}),
    });
    return observation;
  }
}
