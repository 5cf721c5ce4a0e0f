/**
 * One agent session as a front end holds it: the config, the session file, the model router,
 * the MCP servers, the sandbox (inside the conversation) and the conversation, opened in one
 * order and closed in one order. `tern run`, `tern plan` and the interactive UI open one; a
 * subagent, a headless child or an RPC server opens the same.
 *
 * It opens in two steps. The first (config, session file, sandbox settings) is what a front
 * end needs before it can show anything; the second connects the models and the MCP servers
 * and builds the conversation. `tern run` takes both at once; the interactive UI draws its
 * prompt between them and connects on the first need (`connect()`, `preload()`).
 */
import { guardHostPrograms } from "../core/host_programs.ts";
import { TernError } from "../core/errors.ts";
import { shownUrl } from "../core/url_text.ts";
import { visibleText } from "../core/terminal_text.ts";
import { checkSetting } from "../config/schema.ts";
import { settingOf } from "../config/settings.ts";
import type { ConsolidationMode } from "./consolidation.ts";
import {
  type ConfigFlags,
  type ConfigSource,
  isExplicitSource,
  isFlagSource,
  isProjectSource,
  loadConfig,
  projectModelNotice,
  type TernConfig,
} from "../config/mod.ts";
import type { EmitFn } from "../core/events.ts";
import { phaseMark } from "../core/phase_marks.ts";
import type { Provider } from "../llm/types.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { ReplayState } from "../session/replay.ts";
import type { Session } from "../session/session.ts";
import type { CompactionEntry } from "../session/types.ts";
import type { AgentSandbox } from "./agent_sandbox.ts";
import type { Conversation, TurnExtension } from "./conversation.ts";
import type { SubagentHost } from "./subagents/host.ts";
import { readEnv, shellSourceEnv } from "./env.ts";
import type { OpenedMcp } from "./mcp_setup.ts";
import {
  checkSessionServer,
  checkSessionWorkspace,
  openRunSession,
  restoreSessionSettings,
  serverChooser,
  type SessionChoice,
  UNNAMED_PROVIDER,
} from "./run_session.ts";
import { checkSandboxConfig } from "./sandbox_config.ts";
import { interruptedRewindNotice } from "./rewind/interrupted.ts";
import type { Fact } from "../memory/facts.ts";
import type { CompiledRule } from "../sandbox/rules.ts";

export interface AgentSessionOptions {
  /** The workspace: an absolute real path (`resolveWorkspace`). */
  workspace: string;
  /** The command line's settings, above the config files and the environment. */
  flags: ConfigFlags;
  /** Continue the newest session here, or resume a chosen one; a new session when absent. */
  session?: SessionChoice;
  /** Receives every agent event of the conversation's turns. */
  emit: EmitFn;
  /** Asks a person to approve calls (ASK mode); absent when nobody can be asked. */
  person?: AskPerson;
  /** Told about an MCP config or server that is not used; the session goes on without it. */
  warn: (text: string) => void;
  /** Told each time the sandbox opens (it opens while the first model request is in flight). */
  onSandboxOpen?: (sandbox: AgentSandbox) => void;
  /**
   * The remembered facts the most relevant of which (`memoryFacts`) go with each message:
   * `true` reads them once, as the session connects; a function is asked at every turn (the
   * interactive UI's /save changes them). Under a model server a project's files chose, only
   * this workspace's go (`Conversation`).
   */
  memory?: boolean | (() => readonly Fact[]);
  /** Memory consolidation after turns: in the background, or left for the next start. */
  consolidation?: ConsolidationMode;
  /**
   * When the models connect and the MCP servers start: `"now"` (default), before
   * `openAgentSession()` returns, the servers in parallel with the rest; or `"later"`, at the
   * first `connect()`, `preload()` or `mcp()`.
   */
  connect?: "now" | "later";
  /**
   * Watches the MCP servers once they are configured (before they start); default: a lapsed
   * trust and each failure told once through `warn`.
   */
  watchMcp?: (manager: McpManager) => void;
  /** The model gets spawn_agent and wait_agent, and the session a subagent mailbox. */
  subagents?: boolean;
  /** The only tools the model gets (a subagent's); absent, every tool. */
  allowedTools?: ReadonlySet<string>;
  /**
   * `false`: no MCP server is read or started (a subagent, whose tools never include theirs).
   * Default: the configured servers start.
   */
  mcp?: boolean;
}

/** What `configure()` may change between turns. */
export type SessionChange = Partial<TernConfig>;

/** An open agent session: its parts, the preload hook and one way to close everything. */
export class AgentSession {
  readonly #options: AgentSessionOptions;
  readonly #rules: CompiledRule[];
  #config: TernConfig;
  readonly #sources: Record<string, ConfigSource>;
  /**
   * This run's own review mode and profile (flags, environment, config files, defaults; then
   * `/mode`, `/profile`): what a session switched to is weighed against, not the settings the
   * session before it brought back.
   */
  readonly #run: Pick<TernConfig, "mode" | "profile">;
  #session: Session;
  /** The state the session had when it was opened or switched to, replayed once. */
  #opened: { session: Session; state: ReplayState };
  #connecting: Promise<Conversation> | undefined;
  #conversation: Conversation | undefined;
  /**
   * Connecting, `configure()` and `switchSession()` run one at a time, in call order: each
   * reads and writes the config and the session, so one must never see another half done.
   */
  #queue: Promise<unknown> = Promise.resolve();
  #mcpOpening: Promise<OpenedMcp> | undefined;
  #subagents: SubagentHost | undefined;
  /** The close under way or done; set once `close()` is called. */
  #closing: Promise<void> | undefined;
  /** Aborted by the signal of any `close()` call: stops the SessionEnd hooks. */
  readonly #closeCut = new AbortController();

  constructor(
    options: AgentSessionOptions,
    parts: {
      config: TernConfig;
      sources: Record<string, ConfigSource>;
      session: Session;
      state: ReplayState;
      /** This run's own review mode and profile, before the session's were restored. */
      run: Pick<TernConfig, "mode" | "profile">;
      rules: CompiledRule[];
      /** The MCP servers, when they were started already. */
      mcp?: Promise<OpenedMcp>;
    },
  ) {
    this.#options = options;
    this.#config = parts.config;
    this.#sources = parts.sources;
    this.#run = { ...parts.run };
    this.#session = parts.session;
    this.#opened = { session: parts.session, state: parts.state };
    this.#rules = parts.rules;
    this.#mcpOpening = parts.mcp;
  }

  get workspace(): string {
    return this.#options.workspace;
  }

  /** The settings the turns run with: the session's restored ones, the model actually used. */
  get config(): TernConfig {
    return this.#config;
  }

  /** Where each setting came from. */
  get sources(): Readonly<Record<string, ConfigSource>> {
    return this.#sources;
  }

  get session(): Session {
    return this.#session;
  }

  /** The session's state as it was opened (or switched to): replayed once, not per caller. */
  get openedState(): ReplayState {
    return this.#opened.session === this.#session ? this.#opened.state : this.#session.state();
  }

  /** The subagents of this session (`options.subagents`), once connected. */
  get subagents(): SubagentHost | undefined {
    return this.#subagents;
  }

  /** Whether the models are connected (the conversation exists). */
  get connected(): boolean {
    return this.#conversation !== undefined;
  }

  /** The conversation; only once connected (`openAgentSession()` connects unless told later). */
  get conversation(): Conversation {
    if (this.#conversation === undefined) {
      throw new Error("Cannot use the conversation before the session connects: call connect()");
    }
    return this.#conversation;
  }

  /** The main provider with its fallbacks; only once connected. */
  get router(): Provider {
    return this.conversation.provider;
  }

  /**
   * Connects the models and the MCP servers and builds the conversation, once. A connection
   * that fails (an unknown provider, a missing key) is tried again at the next call.
   * @throws {TernError} for an unknown provider or a missing key.
   */
  connect(): Promise<Conversation> {
    if (this.#closing) return Promise.reject(new Error("Cannot connect a closed session"));
    this.#connecting ??= this.#serial(() => this.#connect()).catch((error) => {
      this.#connecting = undefined;
      throw error;
    });
    return this.#connecting;
  }

  /**
   * The MCP servers' config and manager, read once; the servers start then.
   * @throws {ConfigError} for a bad MCP config (the conversation goes on without servers).
   */
  mcp(): Promise<OpenedMcp> {
    if (this.#options.mcp === false) return Promise.resolve({ servers: [] });
    this.#mcpOpening ??= startMcp(this.#options, this.#config, () => this.#closing !== undefined);
    return this.#mcpOpening;
  }

  /**
   * The preload hook: connects, then loads the tool code and opens the sandbox in the
   * background, so the first tool call finds them ready. A front end calls it while the
   * person types; every turn also does it once the model starts answering. Never throws: a
   * failed connection is reported by the next turn.
   */
  preload(): void {
    if (this.#conversation !== undefined) this.#conversation.preload();
    else this.connect().then((conversation) => conversation.preload(), () => {});
  }

  /**
   * Changes settings for the next turn. A model or provider that cannot be used is refused
   * before anything changes. Returns whether the sandbox reopens (a new mode or profile).
   * @throws {TernError} for a model or provider that cannot be connected.
   */
  configure(change: SessionChange): Promise<{ reopens: boolean }> {
    return this.#serial(() => this.#configure(change));
  }

  async #configure(change: SessionChange): Promise<{ reopens: boolean }> {
    change = checkedNames(change);
    let next: TernConfig = { ...this.#config, ...change };
    const sources = { ...this.#sources };
    if (change.model !== undefined) sources.model = { layer: "flag", flag: "/model" };
    if (change.provider !== undefined) sources.provider = { layer: "flag", flag: "/model" };
    // The person's choice for this run, as a flag is: a session switched to later keeps it.
    if (change.mode !== undefined) sources.mode = { layer: "flag", flag: "/mode" };
    if (change.profile !== undefined) sources.profile = { layer: "flag", flag: "/profile" };
    let router: Provider | undefined;
    if (change.model !== undefined || change.provider !== undefined) {
      const { connectModels } = await import("./session_parts.ts");
      const connected = await connectModels(connectable(next), sources);
      const { baseUrl, provider } = this.#config;
      // A base URL the person gave is for the provider it was given with: another provider's key
      // never goes there (the same rule as a subagent's provider, subagents/host.ts).
      if (
        change.provider !== undefined && change.provider !== provider && baseUrl !== undefined &&
        isExplicitSource(this.#sources.baseUrl)
      ) {
        const given = provider ?? UNNAMED_PROVIDER;
        throw new TernError(
          `Cannot switch to provider "${change.provider}": the base URL "${shownUrl(baseUrl)}" ` +
            `was given for provider "${given}", and another provider's key may not go there; ` +
            "start tern without --base-url (or TERN_BASE_URL) to switch providers",
        );
      }
      next = connected.config;
      router = connected.setup.router;
    }
    this.#config = next;
    Object.assign(this.#sources, sources);
    if (change.mode !== undefined) this.#run.mode = change.mode;
    if (change.profile !== undefined) this.#run.profile = change.profile;
    const reopens = change.profile !== undefined || change.mode !== undefined;
    // Not connected yet: the connection takes the new settings when it is made.
    const conversation = this.#conversation;
    if (conversation === undefined) return { reopens: false };
    await conversation.update(router ? { config: next, provider: router } : { config: next });
    // A child holds the permissions it was handed: one holding more than these stops now.
    this.#subagents?.stopNarrowed();
    if (reopens) conversation.preload();
    return { reopens };
  }

  /**
   * Makes `next` the session the conversation appends to; the current one is closed. The
   * current session itself, its leaf moved, keeps only the grants and approvals on its new path
   * (`Conversation.settlePermissions()`). Its
   * model and thinking level are restored; its review mode and profile as opening it would
   * (`restoreSessionSettings()` against this run's own: one that allows more is not), and the
   * returned note tells each restored or refused one. A model that cannot be connected here
   * (its key missing) leaves the current one in place, and the note says so.
   * @throws {SessionChoiceError} when `next` belongs to another directory; `next` is closed and
   * the current session stays.
   */
  switchSession(next: Session): Promise<{ note?: string }> {
    return this.#serial(() => this.#switchSession(next));
  }

  async #switchSession(next: Session): Promise<{ note?: string }> {
    if (next === this.#session) {
      // The same session with its leaf moved (a rewind, `/tree`): a grant or approval left
      // behind on the old path ends now, with the background processes started under it.
      await this.#conversation?.settlePermissions();
      this.#subagents?.stopNarrowed();
      return {};
    }
    try {
      checkSessionWorkspace(next.header, this.#options.workspace);
      checkSessionServer(
        { header: next.header, hasHistory: next.state().items.length > 0 },
        this.#config.serverChosenBy,
      );
    } catch (error) {
      next.close();
      throw error;
    }
    this.#session.closeOrDiscard();
    this.#session = next;
    const state = next.state();
    this.#opened = { session: next, state };
    const current = this.#config;
    // The session's model and thinking come back whatever the command line said: the person
    // chose this session to go on with it. Its mode and profile weigh as on opening.
    const { mode, profile } = this.#sources;
    const { config: restored, notes } = restoreSessionSettings(
      { ...current, ...this.#run },
      { mode, profile },
      state,
    );
    let router: Provider | undefined;
    let note: string | undefined;
    if (restored.model !== current.model || restored.provider !== current.provider) {
      const { connectModels } = await import("./session_parts.ts");
      try {
        const connected = await connectModels(connectable(restored), this.#sources, state);
        this.#config = connected.config;
        router = connected.setup.router;
      } catch (error) {
        this.#config = { ...restored, model: current.model, provider: current.provider };
        note = `Keeping ${current.model}: ${(error as Error).message}`;
      }
    } else {
      this.#config = restored;
    }
    const conversation = this.#conversation;
    if (conversation !== undefined) {
      const config = this.#config;
      await conversation.update(
        router ? { session: next, config, provider: router } : { session: next, config },
      );
      conversation.preload();
    }
    // Another session's grants and settings: a child holding more than they allow stops.
    this.#subagents?.stopNarrowed();
    const interrupted = await interruptedRewindNotice(next.path, next.id);
    const told = [...notes, note, interrupted].filter((text) => text !== undefined);
    return told.length === 0 ? {} : { note: told.join("\n") };
  }

  /**
   * Copies the current session's path to `entryId` (default: its leaf) into a new session and
   * continues there (`switchSession`); the current one is closed.
   * @throws {UnknownEntryError} for an unknown entry.
   */
  async fork(entryId?: string): Promise<{ session: Session; note?: string }> {
    const [{ forkSession }, { VERSION }] = await Promise.all([
      import("../session/fork.ts"),
      import("../version.ts"),
    ]);
    const fork = await forkSession(this.#config.ternHome, this.#session.path, {
      ternVersion: VERSION,
      ...(entryId === undefined ? {} : { entryId }),
    });
    const { note } = await this.switchSession(fork);
    return note === undefined ? { session: fork } : { session: fork, note };
  }

  /**
   * Summarises the older part of the session now (what `/compact` does), with the session's
   * model and the PreCompact hooks; connects first. Undefined when nothing is old enough.
   *
   * @throws {CompactionCancelledError} when `options.signal` fired: nothing was written.
   */
  async compact(
    options: { focus?: string; signal?: AbortSignal } = {},
  ): Promise<CompactionEntry | undefined> {
    const conversation = await this.connect();
    const { compactionSettings, compactSession } = await import("../agent/session_turn.ts");
    const { config } = conversation;
    return await compactSession(this.#session, {
      provider: conversation.provider,
      model: config.model,
      settings: compactionSettings(config.contextWindow, config.compactAt),
      focus: options.focus,
      signal: options.signal,
      emit: this.#options.emit,
      beforeCompact: (signal) => conversation.preCompact("manual", options.focus ?? "", signal),
      mask: (text) => conversation.maskKnownKeys(text),
    });
  }

  /**
   * Closes everything, in this order: the conversation (its sandbox, worker, temporary folder
   * and audit log), the session file (discarded when nothing was written), the MCP servers.
   * A later call waits for the same close. `signal` (a front end shutting down: a second
   * Ctrl-C, a supervisor's stop) cuts the SessionEnd hooks short, as the signal of any later
   * call does; they run at most `SESSION_END_MAX_S` seconds anyway.
   */
  close(signal?: AbortSignal): Promise<void> {
    const cut = this.#closeCut;
    // A second caller (a signal's orderly stop while stdin's end closes too) waits for the
    // same close: returning at once, it could exit while the sandbox is still being closed.
    if (signal === undefined || signal.aborted) {
      if (signal?.aborted) cut.abort(signal.reason);
      return this.#closing ??= this.#close(cut.signal);
    }
    const onAbort = () => cut.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const closing = this.#closing ??= this.#close(cut.signal);
    // A long-lived signal (a front end's) does not keep this session after its close.
    const forget = () => signal.removeEventListener("abort", onAbort);
    closing.then(forget, forget);
    return closing;
  }

  async #close(signal: AbortSignal): Promise<void> {
    try {
      const conversation = await this.#connecting?.catch(() => undefined);
      // Children stop first: their outcomes go into the session before it closes.
      await this.#subagents?.close();
      await conversation?.close(signal);
    } finally {
      this.#session.closeOrDiscard();
      await this.#mcpOpening?.then((opened) => opened.manager?.close(), () => {});
    }
  }

  /** Runs `step` after every step queued before it (see `#queue`). */
  #serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #connect(): Promise<Conversation> {
    const { workspace, memory } = this.#options;
    const { connectModels, Conversation } = await import("./session_parts.ts");
    const [connected, facts] = await Promise.all([
      connectModels(connectable(this.#config), this.#sources, this.openedState),
      memory === true ? rememberedFacts(this.#config, workspace) : undefined,
    ]);
    this.#config = connected.config;
    // A bad MCP config is told (once) and the session goes on without the servers.
    const mcp = await this.mcp().then((opened) => opened.manager, (error) => {
      this.#options.warn(
        `MCP servers are not used: ${error instanceof Error ? error.message : error}`,
      );
      return undefined;
    });
    if (this.#closing) throw new Error("Cannot connect a closed session");
    const extension = this.#options.subagents ? await this.#subagentExtension() : undefined;
    const conversation = new Conversation({
      workspace,
      config: this.#config,
      provider: connected.setup.router,
      session: this.#session,
      rules: this.#rules,
      emit: this.#options.emit,
      person: this.#options.person,
      env: shellSourceEnv(),
      home: readEnv("HOME"),
      facts: typeof memory === "function" ? memory : () => facts ?? [],
      mcp,
      onSandboxOpen: this.#options.onSandboxOpen,
      consolidation: this.#options.consolidation,
      allowedTools: this.#options.allowedTools,
      extension,
    });
    this.#conversation = conversation;
    return conversation;
  }

  /** The subagent host and what it adds to every turn (loaded only when asked for). */
  async #subagentExtension(): Promise<TurnExtension> {
    const { SubagentHost, preloadSubagentTools, subagentTools, checkChildModel } = await import(
      "./session_parts.ts"
    );
    const [{ ruledTools }, { toolHookGate }] = await Promise.all([
      import("./subagents/tool_rules.ts"),
      import("./session_hooks.ts"),
    ]);
    const host = new SubagentHost({
      settings: () => {
        const config = this.#config;
        const sources = this.#sources;
        // A project's choice of server or provider is never handed on as the person's (a
        // flag): the child reads it from the same files, so it keeps the person's keys and
        // their own context from that server as this session does.
        const provider = connectable(config).provider !== undefined &&
          !isProjectSource(sources.provider);
        const baseUrl = isExplicitSource(sources.baseUrl) && !isProjectSource(sources.baseUrl);
        return {
          workspace: this.#options.workspace,
          ternHome: config.ternHome,
          model: config.model,
          ...(provider ? { provider: config.provider } : {}),
          thinking: config.thinking,
          ...(baseUrl ? { baseUrl: config.baseUrl } : {}),
          profile: config.profile,
          noSandbox: config.noSandbox,
          mode: config.mode,
          autoNetwork: config.autoNetwork,
          autoAskRules: config.autoAskRules,
          maxRounds: config.maxRounds,
          maxSubagents: config.maxSubagents,
          subagentTimeoutMs: config.subagentTimeoutMs,
          subagentEscalationTimeoutMs: config.subagentEscalationTimeoutMs,
          prestart: config.subagentPrestart,
          ...(config.reviewModel === undefined ? {} : { reviewModel: config.reviewModel }),
          ...(config.serverChosenBy === undefined ? {} : { serverChosen: true as const }),
        };
      },
      session: () => this.#session,
      goal: () => this.#conversation?.reviewGoal() ?? "",
      person: this.#options.person,
      runCgroup: async () => (await this.#conversation?.sandbox())?.runtime.runCgroup?.(),
      checkModel: (provider, model) =>
        checkChildModel(this.#config, this.#sources, provider, model),
      warn: this.#options.warn,
      mask: (text) => this.#conversation?.maskKnownKeys(text) ?? text,
      rememberScope: (tool, args) => this.#rememberScope(tool, args),
      ended: (completion) => this.#conversation?.subagentStopped(completion),
    });
    this.#subagents = host;
    // maxSubagents 0: no subagent tools at all (the mailbox still delivers earlier runs').
    const tools = this.#config.maxSubagents === 0 ? [] : ruledTools(subagentTools(host), {
      // The person's deny and ask rules naming them, applied as the gate would (they run
      // outside it).
      rules: this.#rules,
      mode: () => this.#config.mode,
      profile: () => this.#config.profile,
      person: this.#options.person,
      mask: (text) => this.#conversation?.maskKnownKeys(text) ?? text,
      session: () => this.#session.id,
      audit: (record) => this.#conversation?.audit(record),
      // The person's PreToolUse and PostToolUse hooks see their calls as the gate's.
      hooks: toolHookGate(
        () => this.#conversation?.activeHooks(),
        () => this.#conversation?.sandbox() ?? this.#conversation?.warm(),
      ),
    });
    return {
      tools,
      ready: () => {
        // Whatever narrowed the session since (a path that moved past a grant included).
        host.stopNarrowed();
        return host.recovered();
      },
      // A cancelled turn stops every running child, not only the ones it started: "Esc stops
      // the agent", and the person cannot tell which turn started which child.
      cancelled: () => void host.stop("all", "the turn was cancelled"),
      inject: () => host.inject(),
      tag: (message) => host.tag(message),
      afterTurn: () => host.afterTurn(),
      steered: () => host.wake(),
      toolUse: (name) => {
        // Only for a spawn on its way: a run that never spawns pays for no idle child (its
        // start costs the run's rounds CPU: bench/results/subagents.md).
        if (name !== "spawn_agent" || !this.#config.subagentPrestart) return;
        // An idle child starts while the call's arguments stream, and the spawn's own code
        // loads (it waits for nothing then).
        host.toolUse();
        preloadSubagentTools();
      },
    };
  }

  /**
   * What "allow for this session" would remember for a call of `tool` with `args`, as this
   * session's own gate reads the call (a subagent's, which the parent shows its person);
   * undefined when nothing can be remembered, or the sandbox or the tool is not there.
   */
  async #rememberScope(tool: string, args: unknown): Promise<string | undefined> {
    const sandbox = await this.#conversation?.sandbox();
    const gated = sandbox?.tools.get(tool);
    if (sandbox === undefined || gated === undefined) return undefined;
    const [{ rememberScope }, { facts }] = await Promise.all([
      import("../agent/call_facts.ts"),
      sandbox.gate.decide(gated, args),
    ]);
    return rememberScope(facts, sandbox.gate.options.masker);
  }
}

/**
 * Reads the MCP config and starts the servers: `options.watchMcp` (default: `watchMcp()`
 * telling `options.warn`) sees the manager before they start, and they are killed if the
 * process unloads without closing them. A session closed meanwhile starts none.
 * @throws {ConfigError} for a bad MCP config.
 */
async function startMcp(
  options: AgentSessionOptions,
  config: Pick<TernConfig, "ternHome" | "rules" | "serverChosenBy" | "keyVariables">,
  closed: () => boolean,
): Promise<OpenedMcp> {
  const { openMcp, killOnExit, watchMcp } = await import("./session_parts.ts");
  const { workspace, warn } = options;
  const opened = await openMcp({
    ternHome: config.ternHome,
    rules: config.rules,
    workspace,
    warn,
    personal: config.serverChosenBy === undefined,
    keyVariables: config.keyVariables,
  });
  const { manager } = opened;
  if (manager === undefined || closed()) return opened;
  (options.watchMcp ?? ((manager) => watchMcp(manager, warn)))(manager);
  killOnExit(manager);
  manager.start();
  return opened;
}

/**
 * `change` with its model and provider names as the settings' own rule takes them (`--model`,
 * TERN_MODEL): from every front end (`/model`, RPC, ACP), a name typed, pasted or listed by a
 * model server that is empty or holds a control or invisible character would be shown as
 * another name than the one sent.
 * @throws {TernError} naming the refused name, its hidden characters shown.
 */
function checkedNames(change: SessionChange): SessionChange {
  const checked = { ...change };
  for (const key of ["provider", "model"] as const) {
    const value = change[key];
    if (value === undefined) continue;
    const result = checkSetting(key, value);
    if (!result.ok) {
      throw new TernError(
        `Cannot switch to ${key} "${visibleText(value)}": expected ${
          settingOf(key).expect
        } without control or invisible characters (\`tern models\` lists the models)`,
      );
    }
    checked[key] = String(result.value);
  }
  return checked;
}

/**
 * `settings` as a connection takes them: a connection made without a named provider reports
 * itself as the unnamed one, which is no name to connect with again.
 */
function connectable(settings: TernConfig): TernConfig {
  return settings.provider === UNNAMED_PROVIDER ? { ...settings, provider: undefined } : settings;
}

/**
 * `sources` without the model and provider when the resumed session's replace this run's
 * (`restoreSessionSettings()`): those are the session's, not chosen by this run's files.
 */
function noticeSources(
  sources: Readonly<Record<string, ConfigSource>>,
  state: Pick<ReplayState, "model" | "provider">,
): Record<string, ConfigSource> {
  const used = { ...sources };
  if (state.model === undefined || isFlagSource(sources.model) || isFlagSource(sources.provider)) {
    return used;
  }
  delete used.model;
  if (state.provider !== undefined && state.provider !== UNNAMED_PROVIDER) delete used.provider;
  return used;
}

/**
 * Opens an agent session: the config read, the session opened and its settings restored, the
 * sandbox settings checked; then, unless `options.connect` is `"later"`, the models connected
 * and the MCP servers started (in parallel with the rest). The sandbox itself opens later
 * (`preload()` or the first turn).
 * @throws {ConfigError} for bad settings, {SessionChoiceError} for a session that cannot be
 * used, {ProviderSetupError} for an unknown provider or a missing key; nothing is left open then.
 */
export async function openAgentSession(options: AgentSessionOptions): Promise<AgentSession> {
  const { workspace } = options;
  const loaded = await loadConfig({ cwd: workspace, flags: options.flags });
  phaseMark("config");
  const ternHome = loaded.config.ternHome;
  const sources = { ...loaded.sources };
  // Before any program starts (MCP servers, git, the sandbox's checks): none of tern's host
  // programs may come from the workspace, where sandboxed commands write (host_programs.ts).
  if (!loaded.config.noSandbox) guardHostPrograms([workspace]);
  const now = (options.connect ?? "now") === "now";
  let closed = false;
  // Connecting now: the MCP servers start at once, in parallel with the session and models.
  const mcp = now && options.mcp !== false
    ? startMcp(options, loaded.config, () => closed)
    : undefined;
  mcp?.catch(() => {});
  let session: Session | undefined;
  let agent: AgentSession | undefined;
  try {
    const chooser = loaded.config.serverChosenBy;
    session = await openRunSession(options.session ?? {}, {
      ternHome,
      workspace,
      serverChosenBy: serverChooser(chooser),
    });
    const state = session.state();
    // Before anything of it is sent: a project's server gets no conversation the person's had.
    checkSessionServer({ header: session.header, hasHistory: state.items.length > 0 }, chooser);
    // Its files may be a half-restored mix: the person hears it before a turn works on them.
    const interrupted = await interruptedRewindNotice(session.path, session.id);
    if (interrupted !== undefined) options.warn(interrupted);
    const { config, notes } = restoreSessionSettings(loaded.config, sources, state);
    const notice = projectModelNotice(config, noticeSources(sources, state));
    if (notice !== undefined) options.warn(notice);
    for (const note of notes) options.warn(note);
    const rules = await checkSandboxConfig(config, workspace, readEnv("HOME"));
    const { mode, profile } = loaded.config;
    const run = { mode, profile };
    agent = new AgentSession(options, { config, sources, session, state, run, rules, mcp });
    if (now) await agent.connect();
    return agent;
  } catch (error) {
    closed = true;
    if (agent !== undefined) {
      await agent.close();
    } else {
      session?.closeOrDiscard();
      await mcp?.then((opened) => opened.manager?.close(), () => {});
    }
    throw error;
  }
}

/**
 * The remembered facts of `workspace` and the person, each with the keys `config` holds and the
 * key formats masked (a fact saved with one is never sent); none when the memory cannot be read.
 */
export async function rememberedFacts(
  config: { ternHome: string; apiKey?: string; apiKeys?: Record<string, string> },
  workspace: string,
): Promise<Fact[]> {
  try {
    const { lazyKeyMasker, MemoryStore } = await import("./session_parts.ts");
    // Made for the first fact: a run without any (most first runs) is not kept waiting for it.
    const masker = { mask: lazyKeyMasker(() => config) };
    return (await MemoryStore.open(config.ternHome, workspace, { masker })).list();
  } catch {
    return [];
  }
}
