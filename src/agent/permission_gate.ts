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
import type { HookRunner } from "../sandbox/hooks/run.ts";
import { analyseCall, fileRoots, reviewRequestFor } from "./call_facts.ts";
import { ToolHooks } from "./tool_hooks.ts";
import type { TurnLease } from "./turn_lease.ts";
import {
  canonicalHost,
  describeRequest,
  type GrantPlaces,
  type GrantRequest,
} from "./request_permissions_policy.ts";
import { type GrantRule, grantRules, judgeGrant } from "./request_permissions_review.ts";

export type { GrantRequest } from "./request_permissions_policy.ts";

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
  /**
   * In AUTO mode, who decides a call that reaches a host the profile gives no network to:
   * the reviewer (default), a person only, or nobody.
   */
  autoNetwork?: "reviewer" | "person" | "never";
  /**
   * In AUTO mode, who answers a call one of the person's "ask" rules matches: the reviewer
   * (default), or a person only (denied when nobody can be asked).
   */
  autoAskRules?: "reviewer" | "person";
  masker: SecretMasker;
  emit: EmitFn;
  /**
   * Receives one record per call; never throws. A record that cannot be written stops later
   * calls (the harness's gate checks the audit log before each: src/harness/agent_gate.ts).
   */
  audit?: (record: AuditRecord) => void;
  session?: string;
  /** Told of every approval or grant that lasts for the session, to record it. */
  onPermissionChange?: (change: PermissionChange) => void;
  /**
   * Lifecycle hooks: PreToolUse runs before the policy (a rewritten input is what the policy
   * and the tool see), PostToolUse after a call that succeeded.
   */
  hooks?: HookRunner;
  /**
   * A variable's value where the sandbox reads a granted one (tern's own environment): a grant
   * of one that could never reach a command is refused before anyone is asked.
   */
  envValue?: (name: string) => string | undefined;
  /**
   * The turns sharing this gate's sandbox (see turn_lease.ts): a grant "for this turn" waits
   * until the asking turn runs alone, and holds off the others until it ends. None: one turn.
   */
  turnLease?: TurnLease;
}

/** Approvals and grants that last for the session, shared by every gated tool. */
export class PermissionGate {
  readonly #options: GateOptions;
  readonly #toolHooks: ToolHooks;
  readonly sessionApprovals = new Set<string>();

  constructor(options: GateOptions) {
    this.#options = options;
    this.#toolHooks = new ToolHooks(options);
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
      runsIn: tool.runsIn,
      ...(tool.guidance === undefined ? {} : { guidance: tool.guidance }),
      paths: (args) => tool.paths(args),
      ...(tool.network ? { network: (args: unknown) => tool.network!(args) } : {}),
      get parameters() {
        return tool.parameters;
      },
      run: (args, ctx) => this.#run(tool, args, ctx),
    };
  }

  /** What the policy says about a call, without running or reviewing it. */
  async decide(
    tool: Pick<Tool, "name" | "readOnly" | "runsIn" | "paths" | "network">,
    args: unknown,
  ): Promise<{
    facts: CallFacts;
    verdict: Verdict;
  }> {
    const facts = await analyseCall(tool, args, this.#options.runtime.workspace);
    const verdict = evaluate(facts, {
      profile: this.#options.runtime.profile,
      rules: this.#options.rules,
      sessionApprovals: new Set([...this.sessionApprovals, ...this.#grantedKeys]),
      workspace: this.#options.runtime.workspace,
    });
    return { facts, verdict };
  }

  /**
   * Settles a call the policy left at "ask". With `needsPerson` (the command would run
   * without a sandbox) only a person may allow it: BYPASS denies, and AUTO asks the person
   * instead of the reviewer, or denies when no one is there.
   */
  async reviewRequest(request: ReviewRequest, signal: AbortSignal, options: {
    needsPerson?: boolean;
    /** The call reaches the network the profile does not give: BYPASS may not allow it. */
    network?: boolean;
    /** Why only a person may decide (default: the command would run without the sandbox). */
    personReason?: string;
  } = {}): Promise<ReviewOutcome> {
    const { mode, person, reviewer, reviewTimeoutMs } = this.#options;
    const autoNetwork = this.#options.autoNetwork ?? "reviewer";
    const noNetwork = (why: string): ReviewOutcome => ({
      allow: false,
      by: "policy",
      reason: `The sandbox profile "${this.#options.runtime.profile.name}" has no network, ${why}`,
      remember: false,
    });
    if (options.network && mode === "bypass") {
      return noNetwork(
        "and --mode bypass grants nothing: use --profile :external, or --mode ask or auto to " +
          "review each request",
      );
    }
    if (options.network && mode === "auto" && autoNetwork === "never") {
      return noNetwork(
        "and autoNetwork is \"never\" (the run's setting, or its parent's): the reviewer may not " +
          "grant it",
      );
    }
    if (options.network && mode === "auto" && autoNetwork === "person" && !options.needsPerson) {
      options = {
        ...options,
        needsPerson: true,
        personReason: "Reaching a host the profile gives no network to needs a person " +
          '(autoNetwork is "person")',
      };
    }
    if (options.needsPerson && mode !== "ask") {
      if (mode === "auto" && person !== undefined) {
        return await review(request, { mode: "ask", person, reviewTimeoutMs, signal });
      }
      return {
        allow: false,
        by: "policy",
        reason: `${
          options.personReason ?? "Running without the sandbox needs a person"
        } (the reviewer may not allow it): use --mode ask in a terminal`,
        remember: false,
      };
    }
    return await review(request, { mode, person, reviewer, reviewTimeoutMs, signal });
  }

  /**
   * The mode a request for more permissions is judged in. In AUTO, `autoNetwork` says who may
   * widen the sandbox: "never" judges it as BYPASS (nothing beyond the person's allow rules),
   * "person" as ASK (the person decides, or nobody: denied), so a subagent, which reviews its
   * calls in AUTO, is never granted more than its BYPASS or ASK parent could be.
   */
  #grantMode(): ReviewMode {
    const { mode, autoNetwork } = this.#options;
    if (mode !== "auto" || autoNetwork === undefined || autoNetwork === "reviewer") return mode;
    return autoNetwork === "never" ? "bypass" : "ask";
  }

  /**
   * Decides a request for more permissions and, when granted, widens the sandbox: paths, hosts
   * and env through the runtime (the worker restarts with the new flags), command prefixes as
   * approvals. In order: tern's own folder is never granted; a deny rule refuses; an allow
   * rule of the person's own config that lists everything asked grants it; otherwise BYPASS
   * grants nothing, AUTO lets the reviewer grant only narrow requests (`reviewerLimits`; the
   * rest goes to a person, or is denied without one) and ASK asks the person. A grant that
   * cannot be applied changes nothing and is reported as a denial. Audited.
   */
  async requestGrant(request: GrantRequest, options: {
    scope: "turn" | "session";
    reason: string;
    summary: string;
    callId: string;
    signal: AbortSignal;
    /** A PreToolUse hook asked for a person's decision, in these words: no rule or reviewer grants it. */
    hookAsks?: string;
  }): Promise<ReviewOutcome> {
    await this.#settleRestored(options.signal);
    const { masker, runtime } = this.#options;
    return await this.#grant(request, {
      ...options,
      reason: request.withoutSandbox
        ? `Commands would run WITHOUT a sandbox (for this ${options.scope})`
        : `Widens the sandbox of profile "${runtime.profile.name}" (for this ${options.scope})`,
      modelReason: masker.mask(options.reason),
      auditReason: options.reason,
    });
  }

  /**
   * Restores the session's approvals and grants from a resumed session. Approvals (which never
   * widen the profile) come back as they were; each grant is decided again under this run's
   * mode, by `requestGrant`'s rules, on the first gated call (so a person is asked while a
   * call waits, not while the sandbox opens): BYPASS drops it with a notice, AUTO lets the
   * reviewer restore only narrow ones, ASK asks again. Nothing comes back silently.
   */
  // deno-lint-ignore require-await
  async restore(changes: readonly PermissionChange[]): Promise<void> {
    for (const change of changes) {
      if (change.kind === "approval") {
        this.sessionApprovals.add(change.key);
        this.#restoredApprovals.push(change.key);
      } else {
        const { extra, keys, withoutSandbox } = change;
        this.#restored.push({ extra, keys, withoutSandbox });
      }
    }
  }

  /**
   * Drops what was granted for this turn only (the conversation calls it as each turn ends). A
   * background process started since the turn's first grant keeps the view it started with,
   * so it is stopped with the grants.
   */
  async endTurn(): Promise<void> {
    // The next turn's commands get a view made anew: the person (or their editor) may have made
    // a `.git` or a file their deny rules match since.
    this.#options.runtime.shellTreeChanged();
    try {
      await this.#dropTurnGrants();
    } finally {
      // Other turns may start once the grants are gone (a claim waiting stays: its turn runs).
      this.#options.turnLease?.release();
    }
  }

  async #dropTurnGrants(): Promise<void> {
    if (this.#turnGrants.length === 0) return;
    const since = this.#turnGrantsSince ?? 0;
    this.#turnGrants = [];
    this.#turnGrantsSince = undefined;
    const { processes } = this.#options.runtime;
    const widened = processes.list().filter((info) =>
      info.startedAt >= since && (info.state === "running" || info.state === "ready")
    );
    await Promise.all(
      widened.map((info) => processes.control(false).stop(info.id).catch(() => {})),
    );
    await this.#apply();
  }

  #sessionGrants: Grant[] = [];
  #turnGrants: Grant[] = [];
  /** When the turn's first grant was given, as `performance.now()` (see endTurn). */
  #turnGrantsSince: number | undefined;
  /** Grants of a resumed session not decided again yet. */
  #restored: Grant[] = [];
  /** Approvals of a resumed session the person has not been told of yet. */
  #restoredApprovals: string[] = [];
  #grantRulesCache?: GrantRule[];

  /** Where grants are judged: the runtime's workspace, home and tern home. */
  get #places(): GrantPlaces {
    const { runtime, envValue } = this.#options;
    return {
      workspace: runtime.workspace,
      home: runtime.home,
      ternHome: runtime.ternHome,
      ...(envValue === undefined ? {} : { envValue }),
    };
  }

  /** The rules about request_permissions, their paths expanded once. */
  get #grantRules(): GrantRule[] {
    return this.#grantRulesCache ??= grantRules(this.#options.rules, this.#places);
  }

  /**
   * Decides restored grants again, once, before the first call that needs the sandbox; calls
   * made meanwhile wait for it.
   */
  async #settleRestored(signal: AbortSignal): Promise<void> {
    if (this.#restored.length > 0 || this.#restoredApprovals.length > 0) {
      this.#settling = this.#settle(signal);
    }
    await this.#settling;
  }

  #settling?: Promise<void>;

  /** Takes the restored state before its first await, so it is settled only once. */
  async #settle(signal: AbortSignal): Promise<void> {
    if (this.#restoredApprovals.length > 0) {
      const keys = [...new Set(this.#restoredApprovals)].join(", ");
      this.#restoredApprovals = [];
      this.#options.emit({
        type: "permission_decision",
        callId: "restore-approvals",
        allow: true,
        // (not "person": front ends show a person's decisions as the dialog itself)
        by: "policy",
        reason: `Restored from the session: your "allow for this session" answers (${keys})`,
      });
    }
    if (this.#restored.length === 0) return;
    const restored = this.#restored;
    this.#restored = [];
    for (const [index, grant] of restored.entries()) {
      const request: GrantRequest = {
        read: [...grant.extra.read],
        write: [...grant.extra.write],
        net: [...new Set(grant.extra.net.map((host) => canonicalHost(host) ?? host))],
        env: [...grant.extra.env],
        commands: grant.keys.map((key) => key.replace(/^bash:/, "")),
        withoutSandbox: grant.withoutSandbox,
      };
      await this.#grant(request, {
        scope: "session",
        summary: `restored from the session: ${describeRequest(request, "session")}`,
        reason: `Granted earlier in this session; a resumed session decides it again under ` +
          `--mode ${this.#options.mode}`,
        auditReason: "restored from the session",
        callId: `restore-${index + 1}`,
        signal,
        restored: true,
      });
    }
  }

  async #grant(request: GrantRequest, options: {
    scope: "turn" | "session";
    /** tern's own words: why this needs review. */
    reason: string;
    /** The model's stated reason (masked), shown after the facts as its words. */
    modelReason?: string;
    auditReason: string;
    summary: string;
    callId: string;
    signal: AbortSignal;
    restored?: boolean;
    hookAsks?: string;
  }): Promise<ReviewOutcome> {
    const { emit, runtime, masker } = this.#options;
    const started = performance.now();
    const asked = { ...request, scope: options.scope };
    const args = masker.maskDeep(asked);
    const summary = masker.mask(options.summary);
    // As for any call: what a key hides, the reviewer cannot judge and a person is told of.
    const hiddenKeys = summary !== options.summary ||
      JSON.stringify(args) !== JSON.stringify(asked);
    const review: ReviewRequest = {
      tool: "request_permissions",
      args,
      summary,
      ...(hiddenKeys ? { hiddenKeys: true as const } : {}),
      reason: options.reason,
      ...(options.modelReason === undefined ? {} : { modelReason: options.modelReason }),
      profile: runtime.profile.name,
      rememberable: false,
      grantFor: options.scope,
    };
    emit({
      type: "permission_request",
      callId: options.callId,
      name: "request_permissions",
      summary: review.summary,
      reason: review.reason,
    });
    const { person, reviewer, reviewTimeoutMs, turnLease } = this.#options;
    // A grant for a turn is asked for once the turn runs alone (turn_lease.ts).
    const claiming = options.scope === "turn" && turnLease !== undefined;
    const claimed = claiming ? await turnLease.claim(options.signal) : false;
    let { outcome, rule, byHook }: Awaited<ReturnType<typeof judgeGrant>> = claiming && !claimed
      ? {
        outcome: {
          allow: false,
          by: "policy",
          reason: "Another turn running beside this one (a plan's step) is waiting for a grant " +
            "of its own, and the sandbox they share would widen for both: ask again once it " +
            "has ended, or ask for the session",
          remember: false,
        },
      }
      : await judgeGrant(request, review, {
        mode: this.#grantMode(),
        person,
        reviewer,
        reviewTimeoutMs,
        signal: options.signal,
        rules: this.#grantRules,
        places: this.#places,
        ...(options.hookAsks === undefined ? {} : { hookAsks: options.hookAsks }),
      }).catch((error) => {
        if (claimed && this.#turnGrants.length === 0) turnLease!.release();
        throw error;
      });
    if (outcome.allow) {
      const grant: Grant = {
        extra: { read: request.read, write: request.write, net: request.net, env: request.env },
        keys: request.commands.map((prefix) => `bash:${prefix}`),
        withoutSandbox: request.withoutSandbox,
      };
      const failure = await this.#commit(grant, options.scope);
      if (failure !== undefined) {
        outcome = {
          allow: false,
          by: outcome.by,
          reason: `The grant could not be applied, so nothing changed (${failure})`,
          remember: false,
        };
        rule = undefined;
      } else if (options.scope === "session" && !options.restored) {
        this.#options.onPermissionChange?.({ kind: "grant", ...grant });
      }
    }
    // Held until the turn ends when granted; given back at once when not (unless the turn
    // holds an earlier grant).
    if (claimed && !outcome.allow && this.#turnGrants.length === 0) turnLease!.release();
    emit({
      type: "permission_decision",
      callId: options.callId,
      allow: outcome.allow,
      by: outcome.by,
      reason: outcome.reason,
    });
    this.#options.audit?.({
      v: 1,
      time: new Date().toISOString(),
      ...(this.#options.session ? { session: this.#options.session } : {}),
      callId: options.callId,
      tool: "request_permissions",
      args: masker.maskDeep({ ...request, scope: options.scope, reason: options.auditReason }),
      profile: runtime.profile.name,
      mode: this.#options.mode,
      decision: outcome.allow ? "allow" : "deny",
      decidedBy: rule !== undefined
        ? "rule"
        : byHook && outcome.by === "policy"
        ? "hook"
        : outcome.by,
      ...(rule !== undefined ? { rule } : {}),
      reason: outcome.reason,
      sandbox: "none",
      status: outcome.allow ? "SUCCEEDED" : "ERROR",
      ...(outcome.allow ? {} : { code: "POLICY_DENIED" }),
      durationMs: Math.round(performance.now() - started),
    });
    return outcome;
  }

  /**
   * Adds `grant` and widens the sandbox. When the runtime cannot apply it (the worker's flags
   * cannot carry a path, the shell plan fails), everything returns to the state before and the
   * reason is returned; undefined on success.
   */
  async #commit(grant: Grant, scope: "turn" | "session"): Promise<string | undefined> {
    const list = scope === "session" ? this.#sessionGrants : this.#turnGrants;
    if (scope === "turn") this.#turnGrantsSince ??= performance.now();
    list.push(grant);
    try {
      await this.#apply({ verify: true });
      return undefined;
    } catch (error) {
      list.splice(list.indexOf(grant), 1);
      // The runtime keeps its state when it throws; this brings the gate's keys back too.
      await this.#apply().catch(() => {});
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** Gives the runtime the union of the grants; `verify` waits for the new worker to start. */
  async #apply(options: { verify?: boolean } = {}): Promise<void> {
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
    }, options);
  }

  #hostFiles: HostFileChange[] = [];

  /**
   * The changes to files that run code on the host (see `persistence.ts`) since the last
   * call, once each path (its last change), and forgets them: for the turn's summary.
   */
  takeHostFileChanges(): HostFileChange[] {
    // What background processes changed since the last call: no call followed to notice it.
    const meanwhile = this.#options.runtime.hostFilesMeanwhile();
    if (meanwhile.length > 0) {
      this.#hostFiles.push(...meanwhile);
      this.#options.audit?.({
        v: 1,
        time: new Date().toISOString(),
        ...(this.#options.session ? { session: this.#options.session } : {}),
        callId: "background",
        tool: "background processes",
        args: {},
        profile: this.#options.runtime.profile.name,
        mode: this.#options.mode,
        decision: "allow",
        decidedBy: "policy",
        reason: "Changed by a background process after the last call",
        sandbox: "bwrap",
        status: "SUCCEEDED",
        durationMs: 0,
        hostFiles: meanwhile,
      });
    }
    const last = new Map(this.#hostFiles.map((change) => [change.path, change]));
    this.#hostFiles = [];
    return [...last.values()];
  }

  #grantedKeys = new Set<string>();
  #unsandboxedKeys = new Set<string>();

  /** See {@linkcode ToolHooks.preToolUse}. */
  preToolUse(
    ...args: Parameters<ToolHooks["preToolUse"]>
  ): ReturnType<ToolHooks["preToolUse"]> {
    return this.#toolHooks.preToolUse(...args);
  }

  /** See {@linkcode ToolHooks.postToolUse}. */
  postToolUse(
    ...args: Parameters<ToolHooks["postToolUse"]>
  ): ReturnType<ToolHooks["postToolUse"]> {
    return this.#toolHooks.postToolUse(...args);
  }

  /** See {@linkcode ToolHooks.refusedByHook}. */
  refusedByHook(...args: Parameters<ToolHooks["refusedByHook"]>): Observation {
    return this.#toolHooks.refusedByHook(...args);
  }

  async #run(tool: Tool, args: unknown, ctx: ToolContext): Promise<Observation> {
    const { runtime, masker, emit } = this.#options;
    // The id is the model's: the audit log and the events get it with known keys masked.
    const callId = masker.mask(ctx.callId ?? "");
    await this.#settleRestored(ctx.signal);
    const started = performance.now();
    const pre = await this.preToolUse(tool.name, args, ctx);
    // A rewritten input goes through the policy (and the tool's own validation) like the
    // model's: a hook cannot slip a call past the gate.
    if (pre?.updatedInput !== undefined) args = pre.updatedInput;
    const decided = await this.decide(tool, args);
    const { facts } = decided;
    let verdict = decided.verdict;
    // Without bubblewrap a command would run unconfined: never silently, whatever allowed it.
    const unconfined = tool.runsIn === "sandbox" && runtime.shellKind === "unavailable";
    if (unconfined && verdict.action !== "deny") {
      verdict = {
        action: "ask",
        by: "profile",
        reason: `The command would run WITHOUT a sandbox: ${runtime.shellNote}`,
      };
    }
    // A web request carrying a key (in its URL or query, whole or in pieces) would send it
    // away: never, whoever allows the call.
    const sent = facts.network?.what;
    if (sent !== undefined && (masker.mask(sent) !== sent || masker.carriesKnownValue(sent))) {
      verdict = {
        action: "deny",
        by: "profile",
        reason: `"${tool.name}" would send a secret (an API key or token) to the network: ` +
          "remove it from the request",
      };
    }
    // A hook only tightens: "deny" (or exit code 2) blocks, "ask" turns an allowed call into a
    // question only a person may answer; "allow" is no opinion.
    const hookAsks = pre?.ask !== undefined && pre.block === undefined &&
      verdict.action !== "deny";
    if (pre?.block !== undefined && verdict.action !== "deny") {
      verdict = {
        action: "deny",
        by: verdict.by,
        reason: `A PreToolUse hook blocked this: ${pre.block}`,
      };
    } else if (hookAsks && verdict.action === "allow") {
      // The hook's words are its own (perhaps quoting the call): a note, apart from tern's.
      verdict = {
        action: "ask",
        by: verdict.by,
        reason: "A PreToolUse hook asks for a person's decision",
        note: { from: "a PreToolUse hook", text: pre!.ask ?? "" },
      };
    }
    // An "ask" rule is the person's own: in AUTO it is theirs to answer when autoAskRules says
    // so (a subagent of an ASK session), never the reviewer's.
    const ruleAsksPerson = verdict.action === "ask" && verdict.by === "rule" &&
      this.#options.mode === "auto" && this.#options.autoAskRules === "person";
    const byHook = pre?.block !== undefined || hookAsks;
    let decidedBy: AuditRecord["decidedBy"] = byHook
      ? "hook"
      : verdict.by === "default"
      ? "policy"
      : verdict.by;
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
      const personReason = unconfined
        ? undefined
        : hookAsks
        ? "A PreToolUse hook asked for a person's decision"
        : ruleAsksPerson
        ? `A rule (${verdict.rule}) asks for a person (autoAskRules is "person": this run's ` +
          "setting, or its parent's)"
        : undefined;
      const outcome = await this.reviewRequest(request, ctx.signal, {
        needsPerson: unconfined || hookAsks || ruleAsksPerson,
        ...(personReason === undefined ? {} : { personReason }),
        network: facts.network !== undefined,
      });
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
    let net: AuditRecord["net"];
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
    } else if (tool.runsIn === "worker" && runtime.worker !== undefined) {
      sandbox = "worker";
      observation = await runtime.worker.call(tool.name, args, {
        signal: ctx.signal,
        // A call that runs away (a catastrophic regex) ends, and its worker is replaced.
        timeoutMs: runtime.limits.toolSeconds * 1000,
        onUpdate: update,
        roots: fileRoots(runtime.profile.grants),
      });
    } else {
      const key = approvalKey(facts);
      const free = key !== undefined && this.#unsandboxedKeys.has(key);
      const runner = free ? runtime.unsandboxedShell : runtime.shell;
      // The hosts a command's proxy connected it to (or refused) go into the audit record.
      const shell: typeof runner = async (command, options) => {
        const result = await runner(command, options);
        if (result.net) {
          net ??= { connected: [], refused: [] };
          net.connected.push(...result.net.connected);
          net.refused.push(...result.net.refused);
        }
        return result;
      };
      sandbox = tool.runsIn === "host"
        ? "host"
        : tool.runsIn === "worker"
        ? "in-process"
        : free || runtime.shellKind !== "bwrap"
        ? "none"
        : "bwrap";
      observation = await tool.run(args, {
        ...ctx,
        update,
        shell,
        // Background processes start with the same confinement as this call's commands.
        processes: runtime.processes.control(free),
        roots: fileRoots(runtime.profile.grants),
      });
      if (tool.runsIn === "sandbox" && !facts.shell?.readOnly) runtime.shellTreeChanged();
    }
    const rest = stream.flush();
    if (rest !== "") ctx.update?.(rest);
    // Background processes that became ready or ended since the last result wake the model.
    const notes = runtime.processes.takeNotes();
    if (notes.length > 0) observation = withNote(observation, notes);
    observation = await this.postToolUse(tool.name, args, observation, ctx, { pre, ran: allowed });
    const hostFiles = watch ? await watch() : [];
    const paths = (await tool.paths(args)).map(({ path, write }) => ({
      path: masker.mask(path),
      write,
    }));
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
      ...(net ? { net } : {}),
      ...(observation.status === "SUCCEEDED" && observation.details?.kind === "web"
        ? {
          web: {
            url: masker.mask(observation.details.url),
            status: observation.details.status,
            bytes: observation.details.bytes,
            ms: observation.details.ms,
          },
        }
        : {}),
      ...(facts.network ? { network: masker.mask(facts.network.what) } : {}),
      ...(hostFiles.length > 0 ? { hostFiles } : {}),
      ...(paths.length > 0 ? { paths } : {}),
    });
    return observation;
  }
}

/** `observation` with a note on background processes after its text. */
function withNote(observation: Observation, notes: readonly string[]): Observation {
  const note = `\n\n[Background processes: ${notes.join("; ")}]`;
  return observation.status === "SUCCEEDED"
    ? { ...observation, output: observation.output + note }
    : { ...observation, message: observation.message + note };
}
