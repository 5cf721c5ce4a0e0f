/**
 * The parent's side of subagents: starts children, keeps the mailbox of the session in use,
 * and hands the conversation what it needs at each turn — the spawn_agent and wait_agent
 * tools, the completions to inject at a model boundary, and the run ids a recorded message
 * delivers. One per agent session.
 */
import type { Message } from "../../core/messages.ts";
import { uniqueHexId } from "../../core/ids.ts";
import { phaseMark } from "../../core/phase_marks.ts";
import { shownUrl } from "../../core/url_text.ts";
import {
  answerOf,
  type AskPerson,
  type PersonReply,
  type ReviewRequest,
} from "../../sandbox/review.ts";
import type { SharedRunCgroup } from "../../sandbox/run_cgroup.ts";
import type { Session } from "../../session/session.ts";
import type { ChildOutcome, ChildProcess, StartedChild } from "./child_process.ts";
import { type Completion, completionText, Mailbox, type SpawnRecord } from "./mailbox.ts";
import type { ChildRequest } from "./protocol.ts";
import { CHILD_BASE_TOOLS, CHILD_PROTOCOL_VERSION } from "./constants.ts";
import { recoverRun } from "./recover.ts";
import { escalatedRequest, type RememberScope } from "./escalation.ts";
import { BUILTIN_MANIFEST } from "../../tools/mod.ts";
import { type Allowance, allowanceOf, narrowing } from "./allowance.ts";
import { type Delegation, delegationQuestion } from "./delegation.ts";
import type { ParentSettings } from "./parent_settings.ts";

export type { ParentSettings } from "./parent_settings.ts";

export interface SubagentHostOptions {
  settings: () => ParentSettings;
  session: () => Session;
  /**
   * The person's own words the parent's calls are judged against now (its AUTO reviewer's
   * goal): a child's reviewer judges the child's calls against them too, never against the task
   * the parent's model wrote.
   */
  goal: () => string;
  /** The parent's person (ASK, or AUTO's person-only questions); absent when none. */
  person?: AskPerson;
  /**
   * The parent's run cgroups (src/sandbox/run_cgroup.ts), for children's commands to join;
   * absent or null when it has none (a child then makes its own).
   */
  runCgroup?: () => Promise<SharedRunCgroup | null | undefined>;
  /** Checks an explicit provider and model; throws with the reason it cannot be used. */
  checkModel: (provider: string | undefined, model: string) => Promise<void>;
  warn: (text: string) => void;
  /** A child's run ended and its completion is recorded (the SubagentStop hooks run then). */
  ended?: (completion: Completion) => void;
  /** Masks the keys tern knows of in what the model wrote (the task's name and message). */
  mask?: (text: string) => string;
  /**
   * How the parent reads what "allow for this session" would allow for a child's call (see
   * escalation.ts). Absent: a child's call is never offered for the session.
   */
  rememberScope?: RememberScope;
}

/** What spawn_agent asks for, validated. */
export interface SpawnArgs {
  taskName: string;
  message: string;
  tools: string[];
  provider?: string;
  model?: string;
  thinking?: ParentSettings["thinking"];
  /** The spawn_agent call's signal (a person's approval is waited for under it). */
  signal: AbortSignal;
}

/** Why wait_agent returned without a completion. */
export type WaitResult =
  | { kind: "completion"; completion: Completion }
  | { kind: "timeout"; running: SpawnRecord[] }
  | { kind: "woken" }
  | { kind: "idle" };

/** Whether the built-in `name` only reads (request_permissions asks for more: it does not). */
function readOnlyTool(name: string): boolean {
  return BUILTIN_MANIFEST.some((entry) => entry.name === name && entry.readOnly);
}

/**
 * Refuses a provider the model chose other than the parent's while the person gave a base URL:
 * that URL was given for the parent's provider, and another provider's key may not go there.
 * @throws {Error} saying why and what to do instead.
 */
function checkProvider(args: SpawnArgs, settings: ParentSettings): void {
  if (settings.baseUrl === undefined || args.provider === undefined) return;
  if (args.provider === settings.provider) return;
  const own = settings.provider === undefined ? "" : ` "${settings.provider}"`;
  throw new Error(
    `Cannot give subagent "${args.taskName}" provider "${args.provider}": the base URL ` +
      `"${shownUrl(settings.baseUrl)}" was given for this session's provider${own}, and another ` +
      "provider's key may not go there; leave out provider (the subagent uses this session's)",
  );
}

/** The cgroups' data alone (a runtime's object carries functions too). */
function plainCgroup(cgroup: SharedRunCgroup): NonNullable<ChildRequest["runCgroup"]> {
  return {
    paths: [...cgroup.paths],
    joinFiles: [...cgroup.joinFiles],
    ...(cgroup.processes === undefined ? {} : { processes: cgroup.processes }),
    ...(cgroup.memoryBytes === undefined ? {} : { memoryBytes: cgroup.memoryBytes }),
    ...(cgroup.events === undefined ? {} : { events: cgroup.events }),
  };
}

/**
 * How long a turn's start waits for the runs spawned before a restart to be recovered, in
 * milliseconds: one whose child has ended is read in far less; one whose child still runs
 * would keep the turn waiting for it.
 */
export const RECOVERY_WAIT_MS = 2_000;

export class SubagentHost {
  readonly #options: SubagentHostOptions;
  #mailbox: Mailbox | undefined;
  /** Children of this process, by run id, with the permissions each was handed. */
  readonly #running = new Map<
    string,
    { spawn: SpawnRecord; child: ChildProcess; given: Allowance }
  >();
  /** Children stopped before their end, by run id, to why (their completion says so). */
  readonly #stopped = new Map<string, string>();
  /** Runs being recovered from the session (spawned before a restart), to their recovery. */
  readonly #recovering = new Map<string, Promise<void>>();
  /** The recoveries a turn's start has waited for (`recovered()`). */
  readonly #waited = new WeakSet<Promise<void>>();
  /** Delivery texts injected, to the run ids they carry. */
  readonly #injected = new Map<string, string[]>();
  /** wait_agent calls, to the run id their result carries. */
  readonly #waitCalls = new Map<string, string>();
  #wakers = new Set<() => void>();
  /**
   * The person queued a message that the model has not been given yet: a wait that starts
   * now ends at once too (the message is on its way to the model's next boundary).
   */
  #steered = false;
  /** Spawns past the limit check and not yet running (their checks are awaited). */
  #starting = 0;
  #closed = false;
  /**
   * The idle child started ahead (at most one): modules loaded, waiting on stdin for a request;
   * it holds no setting and no grant until `spawn()` hands it its request.
   */
  #idle: StartedChild | undefined;
  /** An idle child being started (its module is loading). */
  #prestarting: Promise<void> | undefined;
  /** Children given their request that have not started their run: the next idle one waits. */
  #handedOver = 0;

  constructor(options: SubagentHostOptions) {
    this.#options = options;
  }

  /** The mailbox of the session in use, read when first needed (and again after a switch). */
  mailbox(): Mailbox {
    const session = this.#options.session();
    if (this.#mailbox?.session !== session) {
      this.#mailbox = new Mailbox(session);
      this.#recover(this.#mailbox);
    }
    return this.#mailbox;
  }

  /**
   * Every run of the session with its state, oldest first: `running`, `recovering` (spawned
   * before a restart), `lost` (no result and no child), or its status with `result waiting`
   * or `delivered`.
   */
  states(): Array<{ spawn: SpawnRecord; state: string }> {
    const mailbox = this.mailbox();
    return mailbox.spawns().map((spawn) => {
      const where = mailbox.stateOf(spawn.runId);
      if (where === "pending") {
        const state = this.#running.has(spawn.runId)
          ? "running"
          : this.#recovering.has(spawn.runId)
          ? "recovering"
          : "lost";
        return { spawn, state };
      }
      const status = mailbox.completion(spawn.runId)?.status ?? "";
      return { spawn, state: `${status}, ${where === "waiting" ? "result waiting" : "delivered"}` };
    });
  }

  /** Runs started and not yet completed. */
  running(): SpawnRecord[] {
    return [...this.#running.values()].map((run) => run.spawn);
  }

  /**
   * Starts a child for `args`: the spawn recorded in the parent session, then the process.
   * @throws {Error} at the concurrency limit or for a model that cannot be used.
   */
  async spawn(args: SpawnArgs): Promise<SpawnRecord> {
    phaseMark("spawn");
    const settings = this.#options.settings();
    if (settings.maxSubagents === 0) {
      throw new Error(
        `Cannot spawn "${shownTaskName(args.taskName, this.#mask)}": subagents are turned off ` +
          "(maxSubagents is 0); do the task yourself",
      );
    }
    if (this.#running.size + this.#starting >= settings.maxSubagents) {
      throw new Error(
        `Cannot spawn "${shownTaskName(args.taskName, this.#mask)}": ${
          this.#running.size + this.#starting
        } subagents run already (the ` +
          `limit, maxSubagents); call wait_agent for one to finish first`,
      );
    }
    const explicit = args.provider !== undefined || args.model !== undefined;
    checkProvider(args, settings);
    // Under a base URL the person gave, the parent's provider (API and key) whatever the model.
    const keepProvider = args.model === undefined || settings.baseUrl !== undefined;
    const provider = args.provider ?? (keepProvider ? settings.provider : undefined);
    const model = args.model ?? settings.model;
    this.#starting++;
    let runCgroup: SharedRunCgroup | null | undefined;
    try {
      if (explicit) await this.#options.checkModel(provider, model);
      await this.#approveDelegation(args, settings, {
        taskName: shownTaskName(args.taskName, this.#mask),
        message: args.message,
        tools: args.tools,
        changing: args.tools.filter((name) => !readOnlyTool(name)),
        ...(provider === undefined ? {} : { provider }),
        model,
        thinking: args.thinking ?? settings.thinking,
      });
      runCgroup = await this.#options.runCgroup?.().catch(() => undefined);
      return await this.#start(args, { provider, model, runCgroup });
    } finally {
      // Counted from the limit's check until its child runs: an overlapping spawn cannot pass
      // the limit while this one waits (for the idle child's start, say).
      this.#starting--;
    }
  }

  /** Records the spawn `args` and starts its child, its checks passed. */
  async #start(
    args: SpawnArgs,
    chosen: {
      provider: string | undefined;
      model: string;
      runCgroup: SharedRunCgroup | null | undefined;
    },
  ): Promise<SpawnRecord> {
    const { provider, model, runCgroup } = chosen;
    // The permissions handed over are the session's when the child starts, not before the
    // approval was waited for (the person may have narrowed them meanwhile).
    const settings = this.#options.settings();
    checkProvider(args, settings);
    const mailbox = this.mailbox();
    const session = mailbox.session;
    const taken = new Set(mailbox.spawns().map((spawn) => spawn.agentId));
    // The model's words are recorded in both sessions and shown: never a key in them (a name
    // that held one cannot keep its pattern masked, so it becomes "task").
    const message = this.#mask(args.message);
    const taskName = shownTaskName(args.taskName, this.#mask);
    const spawn: SpawnRecord = {
      kind: "spawn",
      taskName,
      agentId: `agent-${uniqueHexId(taken)}`,
      childSessionId: crypto.randomUUID(),
      runId: `run-${uniqueHexId(new Set())}${uniqueHexId(new Set())}`,
      message,
      tools: [...new Set([...CHILD_BASE_TOOLS, ...args.tools])],
      model,
      ...(provider === undefined ? {} : { provider }),
      thinking: args.thinking ?? settings.thinking,
    };
    const given = allowanceOf(settings, session.state().permissions);
    const request: ChildRequest = {
      type: "request",
      version: CHILD_PROTOCOL_VERSION,
      taskName: spawn.taskName,
      agentId: spawn.agentId,
      childSessionId: spawn.childSessionId,
      runId: spawn.runId,
      parentSession: { id: session.id, path: session.path },
      prompt: message,
      goal: this.#options.goal(),
      cwd: settings.workspace,
      tools: { allow: spawn.tools },
      permissions: {
        profile: settings.profile,
        noSandbox: settings.noSandbox,
        parentMode: settings.mode,
        autoNetwork: settings.autoNetwork,
        autoAskRules: settings.autoAskRules,
        changes: session.state().permissions,
        escalationTimeoutMs: settings.subagentEscalationTimeoutMs,
      },
      timeoutMs: settings.subagentTimeoutMs,
      ...(runCgroup ? { runCgroup: plainCgroup(runCgroup) } : {}),
      model: {
        ...(provider === undefined ? {} : { provider }),
        model,
        thinking: spawn.thinking as ParentSettings["thinking"],
        ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
        maxRounds: settings.maxRounds,
        ...(settings.serverChosen && session.header.serverChosenBy !== undefined
          ? { serverChosenBy: session.header.serverChosenBy }
          : {}),
      },
    };
    // The process side (and the protocol's schemas) load with the first spawn.
    const { ChildProcess, childKey } = await import("./child_process.ts");
    // Recorded first: a crash after this line finds the run and recovers its outcome.
    mailbox.recordSpawn(spawn);
    // An idle start under way (this call's name started it as it streamed) is this spawn's
    // child: waited for (a module already loaded and a process start), not started twice.
    await this.#prestarting;
    const idle = this.#takeIdle(
      settings.prestart ? childKey({ cwd: settings.workspace, baseUrl: settings.baseUrl }) : "",
    );
    let starting = true;
    const started = () => {
      if (!starting) return;
      starting = false;
      this.#handedOver--;
      this.#prestart();
    };
    const child = new ChildProcess({
      request,
      baseUrl: settings.baseUrl,
      timeoutMs: settings.subagentTimeoutMs,
      escalate: (review, signal) => this.#escalate(spawn, review, signal),
      onEnd: (outcome) => {
        started();
        this.#finish(mailbox, spawn, outcome);
      },
      // The next idle child starts once this one runs, not beside its start.
      onStarted: started,
    }, idle);
    this.#handedOver++;
    phaseMark("spawn_sent", { prestarted: idle === undefined ? 0 : 1 });
    this.#running.set(spawn.runId, { spawn, child, given });
    // Narrowed while the child was being started (its module loaded): it stops at once.
    this.stopNarrowed();
    return spawn;
  }

  /**
   * Stops every running child that holds more than the session allows now (a narrower mode or
   * profile, a grant or approval the session's path no longer has); its completion says it was
   * stopped and why. Returns the runs stopped. A widening stops none.
   */
  stopNarrowed(): SpawnRecord[] {
    if (this.#running.size === 0) return [];
    const now = allowanceOf(this.#options.settings(), this.#options.session().state().permissions);
    const stopped: SpawnRecord[] = [];
    for (const [runId, run] of this.#running) {
      const less = narrowing(run.given, now);
      if (less === undefined) continue;
      this.#stop(runId, `the session's permissions narrowed (${less})`);
      stopped.push(run.spawn);
    }
    return stopped;
  }

  /**
   * Stops the running children `which` names (an agent id, a run id, or `"all"`) because of
   * `why`; returns the runs stopped (none for a name that runs nothing).
   */
  stop(which: string, why: string): SpawnRecord[] {
    const stopped: SpawnRecord[] = [];
    for (const [runId, run] of this.#running) {
      if (which !== "all" && which !== runId && which !== run.spawn.agentId) continue;
      this.#stop(runId, why);
      stopped.push(run.spawn);
    }
    return stopped;
  }

  /** SIGTERM (then SIGKILL after a grace), as `close()` does; the first reason is the one told. */
  #stop(runId: string, why: string): void {
    const run = this.#running.get(runId);
    if (run === undefined) return;
    if (!this.#stopped.has(runId)) this.#stopped.set(runId, why);
    run.child.stop();
  }

  /**
   * Waits for the next completion, up to `timeoutMs`; consumes it (for the wait_agent call
   * `callId`). A timeout stops no child; a wake (the person's message) and the signal end the
   * wait without consuming anything.
   */
  async wait(timeoutMs: number, signal: AbortSignal, callId?: string): Promise<WaitResult> {
    const mailbox = this.mailbox();
    const completion = mailbox.take();
    if (completion !== undefined) {
      if (callId !== undefined) this.#waitCalls.set(callId, completion.runId);
      return { kind: "completion", completion };
    }
    if (this.#running.size === 0 && this.#recovering.size === 0) return { kind: "idle" };
    if (this.#steered) return { kind: "woken" };
    const { promise, resolve } = Promise.withResolvers<"post" | "timeout" | "wake" | "abort">();
    {
      const unsubscribe = mailbox.onPost(() => resolve("post"));
      const waker = () => resolve("wake");
      this.#wakers.add(waker);
      const onAbort = () => resolve("abort");
      signal.addEventListener("abort", onAbort, { once: true });
      const timer = setTimeout(() => resolve("timeout"), timeoutMs);
      if (signal.aborted) resolve("abort");
      const why = await promise;
      unsubscribe();
      this.#wakers.delete(waker);
      signal.removeEventListener("abort", onAbort);
      clearTimeout(timer);
      if (why === "abort") throw new Error("The wait was cancelled");
      if (why === "wake") return { kind: "woken" };
      if (why === "timeout") return { kind: "timeout", running: this.running() };
      return await this.wait(timeoutMs, signal, callId);
    }
  }

  /** The person sent a message while a turn runs: ends a wait without consuming anything. */
  wake(): void {
    this.#steered = true;
    for (const waker of [...this.#wakers]) waker();
  }

  /**
   * Resolves when the runs spawned before this process (a parent killed while they ran) that
   * have ended are recovered into the mailbox, so the turn's first `inject()` shows them; at
   * most after `timeoutMs` (default RECOVERY_WAIT_MS): a child that still runs is not waited
   * for, its completion comes at a later boundary. Never rejects.
   */
  async recovered(timeoutMs = RECOVERY_WAIT_MS): Promise<void> {
    if (this.#mailbox === undefined && this.#running.size === 0) {
      if (!this.#options.session().hasSubagentEntries()) return;
    }
    this.mailbox();
    // Each recovery holds up one turn start at most: a child that runs on is not waited for again.
    const fresh = [...this.#recovering.values()].filter((recovery) => !this.#waited.has(recovery));
    if (fresh.length === 0) return;
    for (const recovery of fresh) this.#waited.add(recovery);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => timer = setTimeout(resolve, timeoutMs));
    await Promise.race([Promise.all(fresh), late]);
    clearTimeout(timer);
  }

  /** Completions to show the model at this boundary, each claimed (as agent messages). */
  inject(): string[] {
    // Called right after the queued messages were taken: the person's message is in.
    this.#steered = false;
    if (this.#mailbox === undefined && this.#running.size === 0) {
      // Nothing spawned in this process: the session's mailbox is read only when it has any.
      if (!this.#options.session().hasSubagentEntries()) return [];
    }
    const texts: string[] = [];
    const mailbox = this.mailbox();
    for (let completion = mailbox.take(); completion; completion = mailbox.take()) {
      const text = completionText(completion);
      this.#injected.set(text, [...this.#injected.get(text) ?? [], completion.runId]);
      texts.push(text);
    }
    return texts;
  }

  /**
   * The run ids `message` delivers, for its session entry: an injected text, or a wait_agent
   * result that carries its completion. Marks them consumed (the entry is being written).
   */
  tag(message: Message): string[] | undefined {
    let runIds: string[] | undefined;
    if (message.role === "user") {
      runIds = this.#injected.get(message.content);
      this.#injected.delete(message.content);
    } else if (message.role === "tool") {
      const runId = this.#waitCalls.get(message.toolCallId);
      this.#waitCalls.delete(message.toolCallId);
      // An error instead of the result (a cancelled call) did not show the completion.
      if (runId !== undefined && message.content.includes(runId)) runIds = [runId];
    }
    if (runIds === undefined || this.#mailbox === undefined) return undefined;
    this.#mailbox.delivered(runIds);
    return runIds;
  }

  /** A turn ended: claims its messages did not record go back to the mailbox. */
  afterTurn(): void {
    this.#steered = false;
    this.#injected.clear();
    this.#waitCalls.clear();
    this.#mailbox?.release();
  }

  /**
   * The parent's model is calling spawn_agent (its arguments still stream): the idle child
   * starts now when none is there, and loads while they arrive. A run that never spawns starts
   * none, and the parent's own start and first request never wait for one.
   */
  toolUse(): void {
    this.#prestart();
  }

  /** Stops every child and waits for them (their outcomes are recorded). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#idle?.kill();
    this.#idle = undefined;
    const runs = [...this.#running.values()];
    for (const run of runs) run.child.stop();
    await Promise.all(runs.map((run) => run.child.done));
  }

  /** Starts the idle child when the setting asks for one and none is there (or it ended). */
  #prestart(): void {
    if (this.#closed || this.#prestarting !== undefined || this.#handedOver > 0) return;
    if (this.#idle !== undefined && !this.#idle.exited) return;
    if (!this.#options.settings().prestart) return;
    this.#prestarting = import("./child_process.ts").then(({ StartedChild }) => {
      const settings = this.#options.settings();
      // A spawn meanwhile: its child starts first (it calls again once its run started).
      if (this.#closed || !settings.prestart || this.#handedOver > 0) return;
      const idle = new StartedChild({ cwd: settings.workspace, baseUrl: settings.baseUrl }, true);
      // Waited for by nobody: the parent ends without it, and it ends at its stdin's end.
      idle.process.unref();
      this.#idle = idle;
    }).catch(() => {
      // No idle child (no launcher, no process): the next spawn starts its own and says why.
    }).finally(() => this.#prestarting = undefined);
  }

  /**
   * The idle child, when it still runs and was started for `key` (the same launcher, workspace
   * and model host as a child started now); else none, and an idle one of another key is
   * killed. It is given away: the next one starts later.
   */
  #takeIdle(key: string): StartedChild | undefined {
    const idle = this.#idle;
    this.#idle = undefined;
    if (idle === undefined) return undefined;
    if (idle.exited || idle.key !== key) {
      idle.kill();
      return undefined;
    }
    return idle;
  }

  #finish(mailbox: Mailbox, spawn: SpawnRecord, outcome: ChildOutcome): void {
    if (outcome.kind === "lost" && outcome.status === "failed") {
      // Killed after it recorded its final record, before it wrote it out: the record counts.
      const { ternHome, workspace } = this.#options.settings();
      recoverRun(spawn, { ternHome, workspace }).then(
        (found) => this.#post(mailbox, spawn, found.finalEntryId === null ? outcome : found),
        () => this.#post(mailbox, spawn, outcome),
      );
      return;
    }
    this.#post(mailbox, spawn, outcome);
  }

  #post(mailbox: Mailbox, spawn: SpawnRecord, outcome: ChildOutcome | Completion): void {
    this.#running.delete(spawn.runId);
    const stopped = this.#stopped.get(spawn.runId);
    this.#stopped.delete(spawn.runId);
    if (outcome.kind === "completion") {
      this.#record(mailbox, spawn, stoppedAs(outcome, stopped));
      return;
    }
    const identity = {
      taskName: spawn.taskName,
      agentId: spawn.agentId,
      childSessionId: spawn.childSessionId,
      runId: spawn.runId,
    };
    const completion: Completion = outcome.kind === "final"
      ? {
        kind: "completion",
        ...identity,
        status: outcome.timedOut ? "timed_out" : outcome.final.status,
        content: outcome.final.content,
        finalEntryId: outcome.final.finalEntryId,
        ...(outcome.final.error === undefined ? {} : { error: outcome.final.error }),
      }
      : {
        kind: "completion",
        ...identity,
        status: outcome.status,
        content: "",
        finalEntryId: null,
        error: outcome.error,
      };
    this.#record(mailbox, spawn, stoppedAs(completion, stopped));
  }

  #record(mailbox: Mailbox, spawn: SpawnRecord, completion: Completion): void {
    try {
      mailbox.post(completion);
    } catch (error) {
      // The session closed under a child stopped at exit: the next start recovers it.
      if (!this.#closed) this.#options.warn(`Cannot record subagent ${spawn.runId}: ${error}`);
      return;
    }
    if (!this.#closed) this.#options.ended?.(completion);
  }

  /** Runs spawned before this process: their outcomes read from their sessions. */
  #recover(mailbox: Mailbox): void {
    const { ternHome, workspace } = this.#options.settings();
    for (const spawn of mailbox.unfinished()) {
      if (this.#running.has(spawn.runId) || this.#recovering.has(spawn.runId)) continue;
      this.#recovering.set(
        spawn.runId,
        recoverRun(spawn, { ternHome, workspace }).then((completion) => {
          this.#recovering.delete(spawn.runId);
          if (mailbox.session === this.#options.session()) mailbox.post(completion);
        }, (error) => {
          this.#recovering.delete(spawn.runId);
          this.#options.warn(`Cannot recover subagent ${spawn.runId}: ${error}`);
        }),
      );
    }
  }

  /**
   * Tools that change things go to a child (which reviews its own calls in AUTO) only as the
   * parent would allow them: in ASK a person approves the handing over, and without one it is
   * refused (calls the person's "ask" rules match still come to the person: `autoAskRules`).
   * AUTO and BYPASS parents review no less strictly than the child's AUTO.
   * @throws {Error} when refused.
   */
  /** The model's words with known keys masked, before they are shown or recorded. */
  #mask = (text: string): string => this.#options.mask?.(text) ?? text;

  /**
   * Asks the person before a subagent in ASK mode gets tools that change things: the question
   * shows the model, thinking level, reviewer and task the child gets (delegation.ts).
   * @throws {Error} when refused.
   */
  async #approveDelegation(
    args: SpawnArgs,
    settings: ParentSettings,
    delegation: Delegation,
  ): Promise<void> {
    if (delegation.changing.length === 0 || settings.mode !== "ask") return;
    const person = this.#options.person;
    const { taskName } = delegation;
    const what = delegation.changing.map((name) => `"${this.#mask(name)}"`).join(", ");
    if (person === undefined) {
      throw new Error(
        `Cannot give subagent "${taskName}" ${what}: review mode is "ask" and no person ` +
          "is there to approve handing them to a subagent (which reviews its calls in AUTO)",
      );
    }
    const answer = await person(delegationQuestion(delegation, settings, this.#mask), args.signal)
      .catch(() => "deny" as const);
    // A denial with the person's words is a denial too.
    if (answerOf(answer) === "deny") {
      throw new Error(`Cannot give subagent "${taskName}" ${what}: the person declined`);
    }
  }

  /**
   * A child's call only a person may allow, under the parent's rules: BYPASS grants nothing
   * beyond the profile, ASK and AUTO ask the parent's person, and without one it is denied.
   */
  async #escalate(
    spawn: SpawnRecord,
    request: ReviewRequest,
    signal: AbortSignal,
  ): Promise<PersonReply> {
    const person = this.#options.person;
    if (this.#options.settings().mode === "bypass" || person === undefined) return "deny";
    // A child being stopped gets nothing more (its permissions were narrowed, or its turn ended).
    if (this.#stopped.has(spawn.runId)) return "deny";
    const shown = await escalatedRequest(spawn.taskName, request, this.#options.rememberScope);
    return await person(shown, signal);
  }
}

/**
 * `completion` of a child stopped because of `why` (undefined: not stopped): cancelled, its
 * error saying `stopped: <why>`. One that completed before the stop reached it stays as it is.
 */
function stoppedAs(completion: Completion, why: string | undefined): Completion {
  if (why === undefined || completion.status === "completed") return completion;
  const error = completion.error === undefined || completion.error === ""
    ? `stopped: ${why}`
    : `stopped: ${why}; ${completion.error}`;
  // A kill (no final record) is a stop too; a child's own "cancelled" or "timed_out" stays.
  return {
    ...completion,
    status: completion.status === "failed" ? "cancelled" : completion.status,
    error,
  };
}

/**
 * The model's task name as shown and recorded: a name that held a known key cannot keep its
 * pattern masked, so it becomes "task".
 */
function shownTaskName(taskName: string, mask: (text: string) => string): string {
  return mask(taskName) === taskName ? taskName : "task";
}
