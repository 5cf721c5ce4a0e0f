/**
 * A conversation with the agent in one session: turn after turn, the sandbox opened once and
 * kept warm between turns, settings changeable between turns. `tern run` holds one for a single
 * turn; the interactive UI holds one for its whole life and switches sessions under it.
 */
import { TurnLease } from "../agent/turn_lease.ts";
import { promptName } from "../core/prompt_name.ts";
import type { ToolSpec } from "../core/tool_spec.ts";
import { resolve } from "../core/path.ts";
import type { AgentEvent, EmitFn } from "../core/events.ts";
import type { ImagePart, Message, UserMessage } from "../core/messages.ts";
import { runTurn, type RunTurnOptions, type TurnResult } from "../agent/loop.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";
import type { PermissionRule } from "../config/schema.ts";
import { warnPerson } from "../core/warnings.ts";
import { REQUEST_PERMISSIONS_SPEC } from "../agent/request_permissions.ts";
import {
  compactionHook,
  compactionSettings,
  recordMessages,
  recordSwitch,
} from "../agent/session_turn.ts";
import { applyToolResultBudget, fitRound, toolResultsDir } from "../agent/tool_result_budget.ts";
import type { Provider } from "../llm/types.ts";
import { DeferredTools, TOOL_SEARCH_NAME } from "./deferred_tools.ts";
import type { McpTool } from "../mcp/mcp_tool.ts";
import type { EditDiagnostics } from "./diagnostics/edit_diagnostics.ts";
import type { AskPerson } from "../sandbox/review.ts";
import type { AuditRecord } from "../sandbox/audit.ts";
import type { ProcessHandOver } from "../sandbox/background.ts";
import {
  createKnownValueStreamMasker,
  SecretMasker,
  type StreamMasker,
} from "../sandbox/secrets.ts";
import type { CompiledRule } from "../sandbox/rules.ts";
import type { Session } from "../session/session.ts";
import type { PermissionChange } from "../session/types.ts";
import type { Resources } from "../memory/resources.ts";
import { nestedContextFiles } from "../memory/context_files.ts";
import { modelReadGuard } from "./read_guard.ts";
import { type WorkspaceHidden, WorkspaceHiddenSearch } from "./path_denials.ts";
import type { Observation } from "../core/observation.ts";
import type { Tool } from "../tools/define.ts";
import {
  BASH_TOOL,
  BUILTIN_MANIFEST,
  type BuiltinLoader,
  builtinLoader,
  builtinTools,
} from "../tools/mod.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { loadResources } from "../memory/resources.ts";
import type { Fact } from "../memory/facts.ts";
import { DEFAULT_MEMORY_FACTS, rankedMemorySection, rankFacts } from "../memory/rank.ts";
import { SKILL_TOOL_NAME } from "../memory/skills.ts";
import { type ConsolidationMode, Consolidator } from "./consolidation.ts";
import { composeSystemPrompt } from "./resource_prompt.ts";
import { withPins } from "../context/pins.ts";
import { estimateTokens } from "../context/tokens.ts";
import { MessageTooLargeError } from "./errors.ts";
import type { AgentSandbox } from "./agent_sandbox.ts";
import { CodeIndexTools } from "./code_index_tools.ts";
import { INDEX_READ } from "../sandbox/worker/protocol.ts";
import type { TurnConfig } from "./models.ts";
import { imagesFolder, storeImages, withStoredImages } from "../session/images.ts";
import { recordSettings } from "./run_session.ts";
import { webFetchOptions, webSearchOptions } from "./web_search.ts";
import { type PromptOutcome, SessionHooks } from "./session_hooks.ts";
import { phaseMark } from "../core/phase_marks.ts";
import { COPY, copyJson } from "../core/json_depth.ts";
import { TurnCheckpoints } from "./rewind/turn_checkpoints.ts";
import { loadHooks } from "../sandbox/hooks/load.ts";
import type { HookCommand } from "../sandbox/hooks/config.ts";

/** The built-in tools that run in the tool worker (see `#toolAhead`). */
const WORKER_TOOLS: ReadonlySet<string> = new Set(
  BUILTIN_MANIFEST.filter((entry) => entry.runsIn === "worker").map((entry) => entry.name),
);

export interface ConversationOptions {
  workspace: string;
  config: TurnConfig;
  provider: Provider;
  session: Session;
  /** The rules, compiled (`checkSandboxConfig`). */
  rules: CompiledRule[];
  /** Receives every agent event. */
  emit: EmitFn;
  /** Asks the person (ASK mode); absent when nobody can be asked. */
  person?: AskPerson;
  /** The environment shell commands draw their allowlisted variables from. */
  env: Readonly<Record<string, string>>;
  home?: string;
  /** Told once when the sandbox is open and shell commands cannot be confined. */
  onSandboxOpen?: (sandbox: AgentSandbox) => void;
  /**
   * The remembered facts, asked at every turn (`/save` changes them). The `memoryFacts` most
   * relevant to the person's message (`rankFacts`) ride with it as a section, recorded with
   * it, so the system prompt, and the provider's prompt cache, stay the same. Under a model
   * server a project's files chose (`serverChosenBy`), only the facts of this workspace go.
   */
  facts?: () => readonly Fact[];
  /** MCP servers whose tools join the built-in ones (an `McpManager`). */
  mcp?: McpTools;
  /**
   * Memory consolidation after turns (src/harness/consolidation.ts): in the background
   * (interactive), or marked for the next start (`tern run`); absent: none.
   */
  consolidation?: ConsolidationMode;
  /**
   * The only tools the model gets (a subagent's): built-in names; absent, every tool. Tools
   * not named (MCP tools, skill) are never registered.
   */
  allowedTools?: ReadonlySet<string>;
  /** What a front end adds to every turn: the subagents' tools and mailbox. */
  extension?: TurnExtension;
}

/**
 * What a front end adds to the conversation's turns (src/harness/subagents/host.ts): tools
 * that change nothing and settle their own approvals, messages injected at each model boundary,
 * and the fields their session entries carry.
 */
export interface TurnExtension {
  tools: readonly Tool[];
  /** Resolves when what the turn's start should inject is known (bounded; never rejects). */
  ready?(): Promise<void>;
  /** Texts added as user messages at the turn's start and at each model boundary. */
  inject(): string[];
  /** What a message delivers, written into its session entry (`MessageEntry.mailbox`). */
  tag(message: Message): string[] | undefined;
  /** Called when a turn ends, however it ends. */
  afterTurn(): void;
  /** The turn's signal fired (Esc, an RPC abort, an ACP cancel): called once, at once. */
  cancelled?(): void;
  /** The person sent a message while the turn runs (it is queued as steering). */
  steered?(): void;
  /**
   * The model is calling tool `name` (its name arrived, its arguments still stream): the moment
   * to ready what that tool needs.
   */
  toolUse?(name: string): void;
}

/** The MCP servers' tools as a conversation uses them; `McpManager` provides it. */
export interface McpTools {
  /** Servers that start (enabled and trusted); 0 means there is nothing to wait for. */
  readonly startable: number;
  /** Resolves once no server is still starting. */
  settled(): Promise<void>;
  /** The tools of the servers that are READY. */
  tools(): readonly McpTool[];
  /** Told when a server's state or tool list changed; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** Secret values the servers were given, masked in every tool's output. */
  secrets(): string[];
}

/**
 * The share of the model's window one round's tool results may take together: the rest is for
 * what compaction keeps and summarises (the newest round itself is never cut).
 */
const ROUND_SHARE = 0.5;

/** How long a file tool's result waits for the checks of the files it changed, by default. */
const DIAGNOSTICS_WAIT_MS = 10_000;
/** How long the tool worker may take to read one file for the code index. */
const INDEX_READ_TIMEOUT_MS = 10_000;

/** Options of a turn outside the session's transcript: a plan node's worker. */
export interface DetachedTurnOptions {
  signal?: AbortSignal;
  /** Receives the turn's events (default: none; the sandbox still reports to the conversation). */
  emit?: EmitFn;
  /**
   * Runs around every call of a tool that changes a file (write, edit), given the file's
   * absolute path: the plan's path locks, so two workers never write one file at once.
   */
  aroundWrite?: <T>(path: string, run: () => Promise<T>) => Promise<T>;
  /** Tools this turn has beside the conversation's (a plan node's `fail_step`). */
  extraTools?: readonly Tool[];
  /**
   * The person's own words the AUTO reviewer judges this turn's calls against (a plan's task,
   * never a model-written step); absent, the session's latest message from the person. A plan
   * writes its task to the session only at its end: without this, its steps were judged against
   * whatever the person said before.
   */
  goal?: string;
}

/** Options of one turn. */
export interface TurnOptions {
  signal?: AbortSignal;
  /** Resources read for this turn already (`resources()`); read again when absent. */
  resources?: Resources;
  /** Messages typed while the turn runs, taken at the next model boundary. */
  steering?: () => string[];
  /** Images that go with the task (`tern run --image`), already checked (llm/images.ts). */
  images?: ImagePart[];
  /**
   * The person's own words the AUTO reviewer judges this turn's calls against when `task` holds
   * more or is not theirs: what they typed, when `task` has files, an editor's resources or a
   * template's or skill's text attached; for a subagent, its parent's goal (the task is what the
   * parent's model wrote). `task` then reaches the reviewer only as untrusted context. Absent:
   * `task`. What the person steers in while the turn runs joins it.
   */
  goal?: string;
}

export class Conversation {
  #options: ConversationOptions;
  #opening: Promise<AgentSandbox> | undefined;
  /** The sandbox once opened (for what a turn's end reports). */
  #sandbox: AgentSandbox | undefined;
  /** Gives up the opening under way. */
  #openAbort: AbortController | undefined;
  /** The opening has begun to make things (a tmp folder, the worker) that closing must undo. */
  #openStarted = false;
  /**
   * The session's permission entries the opening sandbox's gate holds (as JSON): those on the
   * path when it opened, and the ones it added since. See `settlePermissions()`.
   */
  #permissionsHeld: string | undefined;
  /** What the background processes of the sandbox closed last hand to the next one. */
  #processesBefore: ProcessHandOver | undefined;
  #loadTools: ReturnType<typeof builtinLoader>;
  /** The sandbox's checks started ahead of its opening (see `preload()`). */
  #prewarming: Promise<void> | undefined;
  #tools: ToolRegistry;
  /** Warnings already given about the project's rules file. */
  #warned = new Set<string>();
  /** The MCP tools in `#tools`, by name, to tell a changed tool from the same one. */
  #mcpTools = new Map<string, McpTool>();
  /** `tool_search`'s module loading (with MCP servers only), then its factory. */
  #toolSearch: Promise<void> | undefined;
  #createToolSearch: typeof import("./tool_search.ts").createToolSearchTool | undefined;
  /** The checks after edits, made at the first change of a file (see `#withDiagnostics`). */
  #diagnostics: Promise<EditDiagnostics> | undefined;
  /** Which MCP tools' schemas requests carry (all, or those `tool_search` loaded). */
  #deferred: DeferredTools;
  #unsubscribe: (() => void) | undefined;
  #running = false;
  /** The code index of code_search and code_symbols, loaded at their first call. */
  #codeIndex: CodeIndexTools;
  /** The web tools' keys (search providers, reader service), to mask. */
  #webSecrets: string[] = [];
  /** The masker of what the front ends are shown, for the keys it was made from. */
  #masking: { keys: string; masker: SecretMasker } | undefined;

  /**
   * A turn's events as front ends are shown them: known keys masked in a call's arguments
   * (tool_start), in a finished assistant message (its text, its calls, its reasoning) and in
   * the text and reasoning the model streams. A stream holds back only an end that begins a
   * known key, until the next piece shows whether the key follows; what it holds is passed on
   * (as one more delta) before any other event.
   */
  #eventMasking(config: TurnConfig): (event: AgentEvent) => AgentEvent[] {
    let streams: { masker: SecretMasker; text: StreamMasker; thinking: StreamMasker } | undefined;
    let round = 0;
    const flushed = (): AgentEvent[] => {
      if (streams === undefined) return [];
      const out: AgentEvent[] = [];
      const text = streams.text.flush();
      if (text !== "") out.push({ type: "text_delta", round, text });
      const thinking = streams.thinking.flush();
      if (thinking !== "") out.push({ type: "thinking_delta", round, text: thinking });
      return out;
    };
    return (event) => {
      const masker = this.#outputMasker(config);
      if (event.type === "text_delta" || event.type === "thinking_delta") {
        const out = streams?.masker === masker && round === event.round ? [] : flushed();
        if (streams?.masker !== masker) {
          streams = {
            masker,
            text: createKnownValueStreamMasker(masker),
            thinking: createKnownValueStreamMasker(masker),
          };
        }
        round = event.round;
        const stream = event.type === "text_delta" ? streams.text : streams.thinking;
        const text = stream.push(event.text);
        if (text !== "") out.push({ ...event, text });
        return out;
      }
      const out = flushed();
      if (event.type === "tool_start") {
        // The call's id and name are the model's words too (an unknown tool's name).
        out.push({
          ...event,
          callId: masker.mask(event.callId),
          name: masker.mask(event.name),
          args: masker.maskDeep(event.args),
        });
      } else if (event.type === "tool_end") {
        out.push({
          ...event,
          callId: masker.mask(event.callId),
          name: masker.mask(event.name),
          // Its details too (a write's diff may show a key the file held).
          observation: maskedKnown(maskedObservation(event.observation, masker), masker),
        });
      } else if (event.type === "assistant_message") {
        const message = this.#maskedMessage(event.message, config, true);
        out.push(message === event.message ? event : { ...event, message });
      } else if (event.type === "turn_end") {
        out.push(maskedResult(event, masker));
      } else {
        // Any other event's words may quote a key too: a reviewer's reason, an API's error.
        out.push(maskedKnown(event, masker));
      }
      return out;
    };
  }

  /**
   * An assistant `message` with known keys masked in its text, its calls' arguments and its
   * reasoning. Reasoning its API signed (`signature`, `data`) is masked only when `shown`: the
   * API takes it back only as it was sent, so the session keeps it whole.
   */
  #maskedMessage<T extends Message>(message: T, config: TurnConfig, shown = false): T {
    if (message.role === "tool") {
      // A call's id and name come from the model; its result may quote them (UNKNOWN_TOOL).
      const masker = this.#outputMasker(config);
      const toolCallId = masker.mask(message.toolCallId);
      const name = masker.mask(message.name);
      const content = masker.mask(message.content);
      const same = toolCallId === message.toolCallId && name === message.name &&
        content === message.content;
      return same ? message : { ...message, toolCallId, name, content };
    }
    if (message.role !== "assistant") return message;
    const masker = this.#outputMasker(config);
    const content = masker.mask(message.content);
    const toolCalls = message.toolCalls?.map((call) => ({
      ...call,
      id: masker.mask(call.id),
      name: masker.mask(call.name),
      arguments: maskedArguments(call.arguments, masker),
    }));
    const thinking = message.thinking?.map((part) =>
      shown || (part.signature === undefined && part.data === undefined)
        ? { ...part, text: masker.mask(part.text) }
        : part
    );
    const same = content === message.content &&
      (toolCalls ?? []).every((call, i) => {
        const was = message.toolCalls![i];
        return call.arguments === was.arguments && call.id === was.id && call.name === was.name;
      }) &&
      (thinking ?? []).every((part, i) => part.text === message.thinking![i].text);
    if (same) return maskedKnown(message, masker);
    // And every other field the server sent along (a call's extra content, reasoning details).
    return maskedKnown({
      ...message,
      content,
      ...(toolCalls === undefined ? {} : { toolCalls }),
      ...(thinking === undefined ? {} : { thinking }),
    }, masker);
  }

  /**
   * Masks the keys tern knows of in every entry `session` keeps from now on, whoever appends it
   * (a turn, a plan, a subagent's records): what a model or its server writes may quote one.
   */
  #maskSession(session: Session): void {
    session.maskEntries((entry) => maskedKnown(entry, this.#outputMasker(this.#options.config)));
  }

  /** `text` with every key tern knows of masked (a summary the model wrote, before it is kept). */
  maskKnownKeys(text: string): string {
    return this.#outputMasker(this.#options.config).mask(text);
  }

  /**
   * A masker for every key tern knows of (the providers', the web tools', the secrets the MCP
   * config gives its servers), kept while they stay.
   */
  #outputMasker(config: TurnConfig): SecretMasker {
    const keys = [
      config.apiKey,
      ...Object.values(config.apiKeys ?? {}),
      ...this.#webSecrets,
      ...this.#options.mcp?.secrets() ?? [],
    ].filter((key): key is string => key !== undefined && key !== "");
    const joined = keys.join("\n");
    if (this.#masking?.keys !== joined) {
      this.#masking = { keys: joined, masker: new SecretMasker(keys) };
    }
    return this.#masking.masker;
  }
  /** The resources (context files, skills, templates) read for the latest turn. */
  #resources: Resources | undefined;
  /** Folders below the workspace whose nested context files were looked for already. */
  #visited = new Set<string>();
  /** What tern may not read for the model, made once per rules list (read_guard.ts). */
  #readGuard: ReadGuardState | undefined;
  /**
   * What the person's deny rules hide in the workspace, where links they match lead included,
   * for the read guard and code search: searched again each turn and after a command.
   */
  #hiddenPaths: WorkspaceHiddenSearch;
  /** Lifecycle hooks of the session (SessionStart, UserPromptSubmit, Stop, SessionEnd). */
  #hooks: SessionHooks;
  #consolidator: Consolidator | undefined;
  /** Checkpoints of the workspace per turn, for the current session (rewind). */
  #turnCheckpoints: TurnCheckpoints | undefined;

  constructor(options: ConversationOptions) {
    this.#options = options;
    this.#hiddenPaths = new WorkspaceHiddenSearch(options.workspace);
    this.#maskSession(options.session);
    if (options.consolidation !== undefined) {
      this.#consolidator = new Consolidator({
        mode: options.consolidation,
        workspace: options.workspace,
        ternHome: options.config.ternHome,
        session: () => this.#options.session,
        provider: () => this.#options.provider,
        model: () => this.#options.config.model,
        busy: () => this.#running,
        mask: (text) => this.maskKnownKeys(text),
        personal: () => this.personal,
      });
    }
    this.#codeIndex = new CodeIndexTools(() => ({
      workspace: this.#options.workspace,
      ternHome: this.#options.config.ternHome,
      home: this.#options.home,
      weights: this.#options.config.searchWeights,
      rules: this.#options.config.rules,
      hidden: () => this.#hiddenPaths.current(this.#options.config.rules),
      read: (path) => this.#indexRead(path),
    }));
    const webFetch = webFetchOptions(options.config.webFetch);
    const webSearch = webSearchOptions(options.config.webSearch, {
      ternHome: options.config.ternHome,
      workspace: options.workspace,
    });
    // The web tools' keys are masked in outputs and the audit log like the providers' keys.
    this.#webSecrets = [
      ...(webFetch.reader?.key ? [webFetch.reader.key] : []),
      ...(webSearch.providers ?? []).map((provider) => provider.key),
    ];
    this.#loadTools = builtinLoader({
      bashTimeoutMs: options.config.bashTimeoutMs,
      codeIndex: () => this.#codeIndex,
      webFetch,
      webSearch,
    });
    const allowed = options.allowedTools;
    this.#tools = new ToolRegistry(
      gatedToolSpecs(this.#loadTools, options.config.bashTimeoutMs).filter((spec) =>
        allowed?.has(spec.name) ?? true
      ).map((
        spec,
      ) => ({
        ...spec,
        run: async (args, ctx) => {
          const gated = (sandbox: AgentSandbox) => sandbox.tools.get(spec.name)!;
          const observation = await this.#runTool(gated, args, ctx);
          await this.#noteChanges(spec, args);
          const checked = await this.#withDiagnostics(spec, args, observation, ctx.signal);
          return await this.#withNestedContext(spec, args, checked);
        },
      })),
    );
    this.#hooks = new SessionHooks(
      loadHooks(
        { ternHome: options.config.ternHome, workspace: options.workspace },
        (text) => this.#warnOnce(text),
      ).then((loaded) => loaded.active, (error) => {
        // The person's own broken settings file (or trust record) runs no hooks, and says so; a
        // broken project file only loses its own hooks (see readHookSources).
        this.#warnOnce(`no hooks run: ${error instanceof Error ? error.message : error}`);
        return [];
      }),
      () => this.#openSandbox(),
    );
    this.#deferred = new DeferredTools(
      options.config.mcpToolSearch ?? "auto",
      options.config.contextWindow,
    );
    this.#tools.setView(this.#deferred);
    // The search tool's schema brings zod: loaded only with MCP servers, before the first
    // request (`#ready`), never on the way of a turn without them.
    this.#toolSearch = options.mcp === undefined ? undefined : import("./tool_search.ts").then(
      (module) => {
        this.#createToolSearch = module.createToolSearchTool;
        this.#syncMcpTools();
      },
    );
    this.#toolSearch?.catch(() => {});
    // Not through the sandbox's gate: they run in tern's process and change nothing, and
    // settle their own approvals (src/harness/subagents/host.ts); waiting for the sandbox to
    // open would delay every child's start.
    for (const tool of options.extension?.tools ?? []) this.#tools.register(tool);
    // A server's `tools/list_changed` reaches the model at its next request.
    this.#unsubscribe = options.mcp?.onChange(() => this.#syncMcpTools());
    this.#syncMcpTools();
  }

  /** Absolute real path of the workspace. */
  get workspace(): string {
    return this.#options.workspace;
  }

  get session(): Session {
    return this.#options.session;
  }

  get config(): TurnConfig {
    return this.#options.config;
  }

  /**
   * Whether the person's own resources from tern's home (context and prompt files, skills,
   * memory.md, facts for every workspace) go to the model: not to a server a project's files
   * chose (`serverChosenBy`, src/config/load.ts).
   */
  get personal(): boolean {
    return this.#options.config.serverChosenBy === undefined;
  }

  get provider(): Provider {
    return this.#options.provider;
  }

  /** True while a turn runs. */
  get running(): boolean {
    return this.#running;
  }

  /** The person's hooks that run (trusted), as read once for this conversation. */
  activeHooks(): Promise<readonly HookCommand[]> {
    return this.#hooks.list();
  }

  /** The sandbox, once a turn has opened it. */
  sandbox(): Promise<AgentSandbox> | undefined {
    return this.#opening;
  }

  /**
   * Writes `record` to the sandbox's audit log, opening the sandbox when no call has yet: for a
   * call decided outside the gate (the subagent host's tools). Never throws: a record lost
   * because the sandbox does not open is told as a warning.
   */
  audit(record: AuditRecord): void {
    this.#openSandbox().then((sandbox) => sandbox.audit(record)).catch((error) => {
      const reason = error instanceof Error ? error.message : String(error);
      this.#warnOnce(`the audit record of a "${record.tool}" call was not written: ${reason}`);
    });
  }

  /**
   * Changes settings for the next turn. A change of profile, mode, rules or session reopens the
   * sandbox (approvals and grants come back from the session), so only between turns.
   */
  async update(
    change: Partial<Pick<ConversationOptions, "config" | "provider" | "session" | "rules">>,
  ): Promise<void> {
    if (this.#running) throw new Error("Cannot change settings while a turn runs");
    const before = this.#options;
    this.#options = { ...before, ...change };
    const after = this.#options;
    const reopen = after.session !== before.session || after.rules !== before.rules ||
      after.config.profile !== before.config.profile || after.config.mode !== before.config.mode ||
      after.config.noSandbox !== before.config.noSandbox || after.provider !== before.provider;
    if (after.session !== before.session) {
      this.#visited.clear();
      before.session.maskEntries(undefined);
      this.#maskSession(after.session);
    }
    // The replaced provider's sockets (Responses over WebSocket) have no more use.
    if (after.provider !== before.provider) await before.provider.close?.();
    if (reopen) await this.#closeSandbox();
  }

  /**
   * The resources of the workspace and the person, read again (an edit counts at the next
   * turn); what is wrong with them is told once on stderr.
   */
  async resources(): Promise<Resources> {
    const resources = await loadResources(
      this.#options.workspace,
      this.#options.config.ternHome,
      await this.#refusal(),
      // A file may be a link to one that holds a key (`MEMORY.md -> backend/.env`).
      {
        personal: this.personal,
        mask: (text) => this.#outputMasker(this.#options.config).mask(text),
      },
    );
    for (const line of resources.diagnostics) this.#warnOnce(line);
    const system = resources.files.system;
    if (system?.level === "project") {
      // A repository may replace the instructions (never the permissions): said, not hidden.
      this.#warnOnce(
        `The project's "${system.path}" replaces tern's default instructions; the sandbox, ` +
          "mode and rules still apply (tern context shows the system prompt)",
      );
    }
    this.#resources = resources;
    await this.#syncSkillTool(resources);
    return resources;
  }

  /**
   * What tern may not read for the model now (the rules may change between turns): for every
   * file of the workspace tern reads in its own process for the model (read_guard.ts).
   */
  readRefusal(): Promise<ReadRefusal> {
    return this.#refusal();
  }

  async #refusal(): Promise<ReadRefusal> {
    const { rules, ternHome } = this.#options.config;
    if (this.#readGuard?.rules !== rules) {
      const places = {
        workspace: this.#options.workspace,
        ternHome,
        home: this.#options.home,
        rules,
      };
      const guard: ReadGuardState = { rules, refuse: Promise.resolve(() => undefined) };
      // Made before the first request (the context files need it): a small module, loaded
      // with this one rather than as a chunk of its own. Its hidden paths are the latest
      // search's, so a refusal kept by a reader (language servers) follows them too.
      guard.refuse = modelReadGuard(places, { hidden: () => guard.hidden });
      this.#readGuard = guard;
    }
    const guard = this.#readGuard;
    guard.hidden = await this.#hiddenPaths.current(rules).catch((error: unknown) =>
      error instanceof Error ? error : new Error(String(error))
    );
    return await guard.refuse;
  }

  /**
   * Opens the sandbox now, and starts the tool worker and the warm shell too (the interactive
   * UI warms it while the person types, when there is time to spare).
   */
  warm(): Promise<AgentSandbox> {
    return this.#openSandbox({ startWorker: true }).then((sandbox) => {
      sandbox.runtime.prewarmShell();
      return sandbox;
    });
  }

  /**
   * Loads `bash`'s code and opens the sandbox in the background, so the first tool call finds
   * them ready: every turn does it once the model starts answering (the request is out). The
   * tool worker, a process of its own, starts only once the model names a file tool, the warm
   * shell once it names `bash` (`#toolAhead`): a run that only uses `bash` never starts the worker.
   */
  preload(): void {
    // The sandbox's code first, then `bash`'s alone (zod, the classifier), the tool most
    // called: the other built-ins that run in this process load at their first call (the file
    // tools run in the worker), so a bash round pays for neither their code nor their schemas.
    const load = () => {
      this.#openSandbox().catch(() => {});
      import("./agent_sandbox.ts").catch(() => {}).then(() => this.#loadTools(BASH_TOOL))
        .catch(() => {});
    };
    if (this.#opening || this.#prewarming || this.#options.config.noSandbox) return load();
    // The sandbox's checks are processes, the longest part of its opening: their small module
    // alone first, so they start at once and run while the rest loads (imported beside it, they
    // started only once all of it had loaded). Nothing more starts once the sandbox was closed.
    const prewarming: Promise<void> = import("../sandbox/prewarm.ts")
      .then(({ prewarmSandbox }) => prewarmSandbox())
      .catch(() => {})
      .then(() => {
        if (this.#prewarming === prewarming) load();
      });
    this.#prewarming = prewarming;
  }

  /**
   * A tool's call is on its way (its name came before its arguments): what runs it starts now,
   * while the arguments arrive and the gate decides, instead of at the call: the warm shell for
   * `bash`, the tool worker (a process of its own) for a file tool. A run that never calls one
   * never starts it. Only once the sandbox opens as `preload()` opens it (its checks first), and
   * never for a sandbox closed meanwhile.
   */
  #toolAhead(name: string): void {
    const ahead = name === BASH_TOOL
      ? (sandbox: AgentSandbox) => sandbox.runtime.prewarmShell()
      : WORKER_TOOLS.has(name)
      ? (sandbox: AgentSandbox) => sandbox.runtime.worker?.start()
      : undefined;
    if (ahead === undefined) return;
    (this.#prewarming ?? Promise.resolve())
      .then(() => this.#opening)
      .then((sandbox) => sandbox === undefined ? undefined : ahead(sandbox))
      .catch(() => {});
  }

  /**
   * Throws when the model's context window cannot hold `text`, a message of the person's (a
   * prompt, or the steering messages queued for the next model call together): recorded, it
   * would fail at the provider at every later request, and no compaction can shrink it.
   * @throws {MessageTooLargeError} naming the sizes and what to do instead.
   */
  checkMessage(text: string): void {
    const { contextWindow } = this.#options.config;
    const tokens = estimateTokens(text);
    if (tokens > contextWindow) {
      throw new MessageTooLargeError(
        `Cannot send a message of about ${tokens} tokens: the model's context window holds ` +
          `${contextWindow}; put long text in a file and name the file in the message`,
      );
    }
  }

  /**
   * A subagent's run ended (its completion recorded): the SubagentStop hooks run, told which
   * run and how it ended. A child cannot go on after its end, so their decisions change nothing;
   * what went wrong with one is told as for any hook. Never throws.
   */
  subagentStopped(run: { agentId: string; runId: string; taskName: string; status: string }): void {
    this.#hooks.fire("SubagentStop", {
      stop_hook_active: false,
      agent_id: run.agentId,
      run_id: run.runId,
      task_name: run.taskName,
      status: run.status,
    }).catch(() => {});
  }

  /** Runs one turn for `task` in the current session. */
  async turn(task: string, options: TurnOptions = {}): Promise<TurnResult> {
    if (this.#running) throw new Error("A turn is already running");
    this.checkMessage(task);
    // A rewind or `/tree` may have moved the leaf past a grant since the sandbox opened.
    await this.settlePermissions();
    if (this.#running) throw new Error("A turn is already running");
    this.#running = true;
    // Set before the turn's next await, so no call of this turn is reviewed without it.
    this.#turnGoal = options.goal === undefined || options.goal === task
      ? { text: task }
      : { text: options.goal, context: givenContext(task) };
    // The person (or their editor) may have made a link a deny rule matches since.
    this.#hiddenPaths.changed();
    this.#consolidator?.beforeTurn();
    let result: TurnResult | undefined;
    const extension = this.#options.extension;
    const cancelled = () => extension?.cancelled?.();
    if (options.signal?.aborted) cancelled();
    options.signal?.addEventListener("abort", cancelled, { once: true });
    try {
      result = await this.#turn(task, options);
      return result;
    } finally {
      options.signal?.removeEventListener("abort", cancelled);
      this.#turnGoal = undefined;
      this.#options.extension?.afterTurn();
      this.#running = false;
      // Decides and returns at once: the work runs behind the next prompt.
      if (result !== undefined) this.#consolidator?.afterTurn(result);
    }
  }

  /**
   * Tells the turn the person queued a steering message: a wait_agent call in progress ends
   * (without consuming a completion) so the message reaches the model.
   */
  steered(): void {
    this.#options.extension?.steered?.();
  }

  /** Resolves when no background memory consolidation runs. */
  consolidated(): Promise<void> {
    return this.#consolidator?.idle() ?? Promise.resolve();
  }

  /**
   * Runs `task` as a turn of its own — the same tools, sandbox, review and provider, but a
   * fresh context (system prompt and `task` only) and nothing recorded in the session. Several
   * may run at once (plan nodes); they do not count as the conversation's running turn.
   */
  async detachedTurn(task: string, options: DetachedTurnOptions = {}): Promise<TurnResult> {
    // Pushed before the first await, so no call of this turn is reviewed without it.
    const goal = options.goal === undefined ? undefined : { text: options.goal };
    if (goal !== undefined) this.#detachedGoals.push(goal);
    try {
      return await this.#detachedTurn(task, options);
    } finally {
      if (goal !== undefined) this.#detachedGoals.splice(this.#detachedGoals.indexOf(goal), 1);
    }
  }

  /**
   * The goals of the detached turns running now, latest last: the AUTO reviewer's goal while
   * any runs (a plan's steps all carry the plan's task; the interactive UI starts no turn of its
   * own while a plan runs).
   */
  #detachedGoals: Array<{ text: string }> = [];
  /** The detached turns sharing the sandbox: a grant for one turn is that turn's alone. */
  readonly #turnLease = new TurnLease();

  /**
   * The running turn's goal for the AUTO reviewer: the person's own words (`TurnOptions.goal`,
   * else the task) and what they steered in since, with the message as the model got it as
   * context when it holds more. Never a message tern made up itself (a subagent's completion).
   */
  #turnGoal: { text: string; context?: string } | undefined;

  /**
   * The person's own words the AUTO reviewer judges calls against now: a running plan's task,
   * the running turn's goal, else the person's latest message in the session.
   */
  reviewGoal(): string {
    return this.#detachedGoals.at(-1)?.text ?? this.#turnGoal?.text ??
      lastPersonText(this.#options.session);
  }

  /**
   * Runs one detached turn. Its end takes the changes to files that run code on the host (a
   * `turn_end` event's `hostFiles`, as a turn of the session reports them) when it has `emit` to
   * tell them to; steps running beside it share the sandbox, so they may include theirs.
   * Without `emit` they stay for the next turn's end or the sandbox's close to report.
   */
  async #detachedTurn(task: string, options: DetachedTurnOptions): Promise<TurnResult> {
    const { workspace, config, provider } = this.#options;
    this.#hiddenPaths.changed();
    await this.#ready(options.signal);
    let tools = this.#detachedTools ?? this.#tools;
    if (options.aroundWrite) {
      // Only plan nodes lock paths: the wrapper loads with the first of them.
      const { lockedWrites } = await import("./locked_writes.ts");
      tools = lockedWrites(tools, workspace, options.aroundWrite);
    }
    if (options.extraTools !== undefined && options.extraTools.length > 0) {
      tools = tools.derive([
        ...tools.names.map((name) => tools.get(name)!),
        ...options.extraTools,
      ]);
    }
    const resources = await this.resources();
    const shown = this.#eventMasking(config);
    const emit = options.emit;
    // Waits while another step holds a grant for its own turn (turn_lease.ts).
    await this.#turnLease.enter(options.signal);
    try {
      const result = await runTurn({
        messages: [
          { role: "system", content: this.#systemPrompt(resources) },
          { role: "user", content: this.#withFacts(task) },
        ],
        provider,
        model: config.model,
        tools,
        workspace,
        emit: emit === undefined ? () => {} : (raw) => {
          for (const event of shown(raw)) {
            if (event.type !== "turn_end") {
              emit(event);
              continue;
            }
            const hostFiles = this.#sandbox?.gate.takeHostFileChanges() ?? [];
            emit(hostFiles.length > 0 ? { ...event, hostFiles } : event);
          }
        },
        signal: options.signal,
        maxRounds: config.maxRounds,
        maxTokens: config.maxTokens,
        temperature: config.temperature,
        thinking: config.thinking,
        fitResults: this.#roundFit(config),
      });
      return maskedResult(result, this.#outputMasker(config));
    } finally {
      // What was granted "for this turn" ends with this turn, even while other detached turns
      // (a plan's other steps, sharing one sandbox) still run: they may have to ask again, but
      // no grant outlives the step it was given to.
      await this.#sandbox?.gate.endTurn().catch(() => {});
      this.#turnLease.leave();
    }
  }

  /**
   * The person's prompt for work that is not a turn of the session (a plan's task) through the
   * SessionStart (the conversation's first prompt) and UserPromptSubmit hooks, as `turn()`
   * passes its message: the text with what they add, or why one blocked it.
   */
  submitPrompt(task: string, signal?: AbortSignal): Promise<PromptOutcome> {
    const resumed = this.#options.session.state().items.length > 0;
    return this.#hooks.prompt(task, resumed, signal);
  }

  /**
   * Runs the Stop hooks once for work that is not a turn of the session, when it ended (a
   * plan): the reason a blocking one gave (there is no turn for it to continue), else
   * undefined. Never throws.
   */
  async stopHooks(signal?: AbortSignal): Promise<string | undefined> {
    const outcome = await this.#hooks.fire("Stop", { stop_hook_active: false }, signal)
      .catch(() => undefined);
    return outcome?.block;
  }

  /**
   * Runs the PreCompact hooks (Claude Code's `trigger` and `custom_instructions`), stopped with
   * `signal` (the compaction's: Esc, a cancelled turn); never throws.
   */
  async preCompact(
    trigger: "manual" | "auto",
    instructions = "",
    signal?: AbortSignal,
  ): Promise<void> {
    await this.#hooks.fire("PreCompact", { trigger, custom_instructions: instructions }, signal)
      .catch(() => {});
  }

  /** The tools of detached turns while {@linkcode checkpointDetached} checkpoints them. */
  #detachedTools: ToolRegistry | undefined;

  /**
   * Checkpoints work that answers user entry `entryId` without being a turn of the session (a
   * plan's steps): the detached turns run until the returned function is called share one
   * checkpoint, taken at the first writing call of any of them, and that function records the
   * workspace after the last (what a rewind to `entryId` takes back). Nothing when checkpoints
   * are off.
   */
  checkpointDetached(entryId: string): () => Promise<void> {
    const checkpoints = this.#checkpoints();
    if (checkpoints === undefined) return () => Promise.resolve();
    const tools = checkpoints.wrap(this.#tools, entryId);
    this.#detachedTools = tools;
    return async () => {
      if (this.#detachedTools === tools) this.#detachedTools = undefined;
      await checkpoints.endTurn();
    };
  }

  /** Resolves when the last turn's checkpoint is recorded (before a rewind reads them). */
  async checkpointsIdle(): Promise<void> {
    await this.#turnCheckpoints?.idle();
  }

  /**
   * Stops the background processes and tells what they changed among the files that run code on
   * the host since the last turn's end (see `#stopBackground`); the sandbox starts no more of
   * them. For the end of a session before its summary (`tern run`): closing the sandbox does it
   * too, but later. Never throws.
   */
  async stopBackground(): Promise<void> {
    if (this.#sandbox !== undefined) await this.#stopBackground(this.#sandbox);
  }

  /**
   * Runs the SessionEnd hooks (at most `SESSION_END_MAX_S` seconds, cut short by `signal`: a
   * front end shutting down), then stops the sandbox (background processes, worker, tmp, audit
   * log), reporting what the background processes changed since the last turn's end. The
   * session stays open: it is the caller's.
   */
  async close(signal?: AbortSignal): Promise<void> {
    // A snapshot no writing call needed is stopped, not waited for (a large workspace's takes
    // seconds); a recorded checkpoint's is finished.
    await this.#turnCheckpoints?.abandon();
    await this.#hooks.fire("SessionEnd", { reason: "other" }, signal).catch(() => {});
    // Never waited for: a consolidation under way is dropped, and runs again later.
    this.#consolidator?.close();
    this.#unsubscribe?.();
    this.#codeIndex.close();
    await this.#options.provider.close?.();
    // The language servers first: they run in the sandbox's view.
    await this.#diagnostics?.then((diagnostics) => diagnostics.close(), () => {});
    await this.#closeSandbox();
  }

  async #turn(task: string, options: TurnOptions): Promise<TurnResult> {
    const { workspace, config, session } = this.#options;
    // Images live in the session folder by hash; every request reads them back.
    const images = imagesFolder(session.path);
    const provider = withStoredImages(this.#options.provider, images);
    const state = session.state();
    const shown = this.#eventMasking(config);
    // A key the model wrote is not shown on the tool line, in its text, in JSON events or to an
    // embedding client (the call itself is judged unmasked).
    const deliver = (event: AgentEvent): void => {
      if (event.type === "model_switch") recordSwitch(session, event);
      // The summary may have replaced the results that carried nested context files: the
      // next tool that touches their folders brings them again.
      if (event.type === "compaction") this.#visited.clear();
      if (event.type === "permission_request") {
        this.#hooks.fire("Notification", {
          message: `tern needs your permission to use ${event.name}`,
        }).catch(() => {});
      }
      if (event.type === "turn_end") {
        const hostFiles = this.#sandbox?.gate.takeHostFileChanges() ?? [];
        if (hostFiles.length > 0) {
          this.#options.emit({ ...event, hostFiles });
          return;
        }
      }
      this.#options.emit(event);
    };
    const emit: EmitFn = (raw) => {
      for (const event of shown(raw)) deliver(event);
    };
    recordSettings(session, state, config);
    await this.#ready(options.signal);
    // A resumed session's loaded MCP tools are in its history: the tool list continues.
    this.#deferred.restore(state.items.map((item) => item.message));
    const resources = options.resources ?? await this.resources();
    const prompt = await this.#hooks.prompt(task, state.items.length > 0, options.signal);
    if (prompt.blocked) return blockedTurn(emit, config.model, prompt.reason);
    const user: UserMessage = { role: "user", content: this.#withFacts(prompt.text) };
    if (options.images !== undefined && options.images.length > 0) user.images = options.images;
    const userEntry = session.append({ type: "message", message: storeImages(user, images) });
    const checkpoints = this.#checkpoints();
    let stopped = 0;
    const extension = this.#options.extension;
    const recordAs = recordMessages(session, extension && ((message) => extension.tag(message)));
    // The session keeps the model's messages with known keys masked, as front ends show them.
    const record: typeof recordAs = (message, usage, answeredBy) =>
      recordAs(this.#maskedMessage(message, config), usage, answeredBy);
    const messages: Message[] = [
      // Pinned instructions follow the system prompt: no compaction summarises them away.
      { role: "system", content: withPins(this.#systemPrompt(resources), state.pins) },
      ...state.items.map((item) => item.message),
      user,
    ];
    // What waited for this turn (a subagent's completion) comes right after the message.
    await extension?.ready?.();
    for (const content of extension?.inject() ?? []) {
      const message: Message = { role: "user", content };
      record(message);
      messages.push(message);
    }
    // What the person steers in joins their goal for the reviewer (a subagent's completion,
    // injected beside it, does not).
    const personSteering = options.steering && (() => {
      const texts = options.steering!();
      const goal = this.#turnGoal;
      if (texts.length > 0 && goal !== undefined) goal.text = [goal.text, ...texts].join("\n\n");
      return texts;
    });
    const steering = extension
      ? () => [...personSteering?.() ?? [], ...extension.inject()]
      : personSteering;
    try {
      const result = await runTurn({
        messages,
        provider,
        model: config.model,
        tools: checkpoints?.wrap(this.#tools, userEntry.id) ?? this.#tools,
        workspace,
        emit,
        signal: options.signal,
        steering,
        beforeStop: async (signal) =>
          await this.#hooks.stop(stopped++ > 0, signal) ?? await this.#lateDiagnostics(signal),
        maxRounds: config.maxRounds,
        maxTokens: config.maxTokens,
        temperature: config.temperature,
        thinking: config.thinking,
        cacheKey: `tern-${session.id}`,
        onMessage: record,
        fitResults: this.#roundFit(config),
        onAnswering: () => {
          // The sandbox's checks first (their module is small), then the checkpoint's git
          // processes: all of them run while the tool code loads.
          this.preload();
          checkpoints?.requestOut();
        },
        onToolCallStart: (name) => {
          extension?.toolUse?.(name);
          this.#toolAhead(name);
        },
        prepare: compactionHook(session, {
          mask: (text) => this.maskKnownKeys(text),
          provider,
          model: config.model,
          settings: compactionSettings(config.contextWindow, config.compactAt),
          emit,
          beforeCompact: (signal) => this.preCompact("auto", "", signal),
          tools: () => this.#tools.specs(),
        }),
      });
      return maskedResult(result, this.#outputMasker(config));
    } finally {
      await checkpoints?.endTurn();
      // What was granted for this turn only ends with it.
      await this.#sandbox?.gate.endTurn().catch(() => {});
    }
  }

  /** The session's per-turn checkpoints (rewind); none when `rewindMaxFileBytes` is 0. */
  #checkpoints(): TurnCheckpoints | undefined {
    const { session, workspace, config } = this.#options;
    if (config.rewindMaxFileBytes === 0) return undefined;
    if (this.#turnCheckpoints?.sessionPath !== session.path) {
      this.#turnCheckpoints = new TurnCheckpoints({
        sessionPath: session.path,
        sessionId: session.id,
        workspace,
        maxFileBytes: config.rewindMaxFileBytes,
        maxFiles: config.rewindMaxFiles,
        warn: (text) => this.#warnOnce(text),
        rules: () => this.#options.config.rules,
      });
    }
    return this.#turnCheckpoints;
  }

  /** The tools the model is offered now (what `/context` counts). */
  toolSpecs(): ToolSpec[] {
    return this.#tools.specs();
  }

  #systemPrompt(resources: Resources): string {
    const { workspace } = this.#options;
    return composeSystemPrompt(
      {
        workspace,
        toolNames: this.#deferred.promptNames(this.#tools.names),
        toolGuidance: this.#tools.guidance(),
      },
      resources,
    );
  }

  /** `task` with the remembered facts chosen for it after a blank line, when any. */
  #withFacts(task: string): string {
    const { config, facts } = this.#options;
    if (facts === undefined) return task;
    // The person's facts for every workspace are theirs, not this repository's server's.
    const sendable = this.personal ? facts() : facts().filter((fact) => fact.scope !== "user");
    const limit = config.memoryFacts ?? DEFAULT_MEMORY_FACTS;
    const section = rankedMemorySection(rankFacts(sendable, task, limit));
    return section ? `${task}\n\n${section}` : task;
  }

  /** Tells `text` on stderr once per conversation: the prompt is built for every turn. */
  #warnOnce(text: string): void {
    if (this.#warned.has(text)) return;
    this.#warned.add(text);
    // Names files of the repository, and quotes them: `warnPerson` makes it one safe line.
    warnPerson(text);
  }

  /** Registers the `skill` tool while there are skills, and removes it when there are none. */
  async #syncSkillTool(resources: Resources): Promise<void> {
    if (this.#options.allowedTools?.has(SKILL_TOOL_NAME) === false) return;
    const has = this.#tools.get(SKILL_TOOL_NAME) !== undefined;
    if (resources.skills.length > 0 && !has) {
      // Only with skills: the tool's schema brings zod, which a turn without skills does not
      // wait for before its first request.
      const { createSkillTool } = await import("./skill_tool.ts");
      // Turns that run at once (a plan's ready steps) read resources together: one of them
      // may have registered it while this one waited for the module.
      if (this.#tools.get(SKILL_TOOL_NAME) !== undefined) return;
      const tool = createSkillTool(() => this.#resources?.skills ?? []);
      this.#tools.register({
        name: tool.name,
        description: tool.description,
        readOnly: tool.readOnly,
        runsIn: tool.runsIn,
        paths: (args) => tool.paths(args),
        parameters: tool.parameters,
        // Through the gate like every tool: rules (a person may deny it), audit, the budget.
        run: (args, ctx) => this.#runTool((sandbox) => sandbox.gate.wrap(tool), args, ctx),
      });
    } else if (resources.skills.length === 0 && has) {
      this.#tools.unregister(SKILL_TOOL_NAME);
    }
  }

  /**
   * A file tool's result with the context files of the folders it first touched below the
   * workspace appended (AGENTS.md in packages/x/ joins when a tool first works there): they
   * reach the next model request as part of this result, and the system prompt, cached by
   * the provider, stays as it was.
   */
  async #withNestedContext(
    spec: Omit<Tool, "run">,
    args: unknown,
    observation: Observation,
  ): Promise<Observation> {
    if (observation.status !== "SUCCEEDED" || spec.runsIn !== "worker") return observation;
    const files = [];
    const refuse = await this.#refusal();
    for (const { path } of await spec.paths(args)) {
      files.push(
        ...nestedContextFiles(
          this.#options.workspace,
          path,
          this.#visited,
          refuse,
          (text) => this.#warnOnce(text),
        ),
      );
    }
    if (files.length === 0) return observation;
    // Its text joins a result that was masked already: a command may have copied keys into it.
    const added = files.map((file) =>
      `\n\n[Context file ${promptName(file.path)} applies to this folder; follow it:]\n` +
      this.maskKnownKeys(file.text.trim())
    );
    return { ...observation, output: observation.output + added.join("") };
  }

  /**
   * A file tool's result with what the checker of each file it changed found new there
   * (src/harness/diagnostics/), loaded at the first change of a file; a check still running
   * after a few seconds lets the result go, and what it finds comes with a later result.
   */
  async #withDiagnostics(
    spec: Omit<Tool, "run">,
    args: unknown,
    observation: Observation,
    signal: AbortSignal,
  ): Promise<Observation> {
    const settings = this.#options.config.diagnostics;
    if (observation.status !== "SUCCEEDED") return observation;
    const written = spec.runsIn !== "worker" || spec.readOnly || settings?.enabled === false
      ? []
      : (await spec.paths(args)).filter((path) => path.write);
    if (written.length === 0 && this.#diagnostics === undefined) return observation;
    const refuse = await this.#refusal();
    this.#diagnostics ??= import("./diagnostics/edit_diagnostics.ts").then(
      ({ EditDiagnostics }) =>
        new EditDiagnostics({
          workspace: this.#options.workspace,
          path: this.#options.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
          settings,
          refuse,
          // A finding may quote the file, whose keys were masked where the model read it.
          mask: (text) => this.maskKnownKeys(text),
          shell: async () => {
            const { runtime } = await this.#openSandbox();
            return {
              run: runtime.shell,
              kind: runtime.shellKind,
              launch: (argv, options) => runtime.serverLaunch(argv, options),
            };
          },
        }),
    );
    const diagnostics = await this.#diagnostics;
    const notes: string[] = [];
    for (const { path } of written) {
      if (signal.aborted) break;
      const file = resolve(this.#options.workspace, path);
      const real = await Deno.realPath(file).catch(() => file);
      const note = await diagnostics.check(real, settings?.waitMs ?? DIAGNOSTICS_WAIT_MS);
      if (note !== undefined) notes.push(note);
    }
    notes.push(...diagnostics.takeLate());
    if (notes.length === 0) return observation;
    return { ...observation, output: `${observation.output}\n\n${notes.join("\n\n")}` };
  }

  /**
   * When the model would stop: what checks still running after their change's result found,
   * once they end (each is bounded by its timeout), as a message that continues the turn.
   */
  async #lateDiagnostics(signal: AbortSignal): Promise<string | undefined> {
    if (this.#diagnostics === undefined || signal.aborted) return undefined;
    const diagnostics = await this.#diagnostics;
    const { promise: aborted, resolve } = Promise.withResolvers<void>();
    signal.addEventListener("abort", () => resolve(), { once: true });
    await Promise.race([diagnostics.idle(), aborted]);
    const notes = diagnostics.takeLate();
    return notes.length === 0 || signal.aborted ? undefined : notes.join("\n\n");
  }

  /**
   * The first request carries every MCP tool: waits for servers still starting (each has its
   * startup timeout; one that fails is left out).
   */
  async #ready(signal?: AbortSignal): Promise<void> {
    const mcp = this.#options.mcp;
    if (mcp !== undefined && mcp.startable > 0 && !signal?.aborted) {
      // Esc while servers start ends the wait: the turn then ends CANCELLED.
      const { promise: aborted, resolve } = Promise.withResolvers<void>();
      signal?.addEventListener("abort", () => resolve(), { once: true });
      await Promise.race([mcp.settled(), aborted]);
    }
    await this.#toolSearch;
    this.#syncMcpTools();
  }

  /** Puts the READY servers' tools into the registry, replacing the ones that changed. */
  #syncMcpTools(): void {
    const allowed = this.#options.allowedTools;
    const current = new Map(
      (this.#options.mcp?.tools() ?? []).filter((tool) => allowed?.has(tool.name) ?? true)
        .map((tool) => [tool.name, tool]),
    );
    for (const [name, tool] of this.#mcpTools) {
      if (current.get(name) === tool) continue;
      this.#tools.unregister(name);
      this.#mcpTools.delete(name);
    }
    for (const [name, tool] of current) {
      if (this.#mcpTools.has(name)) continue;
      this.#tools.register({
        name,
        description: tool.description,
        readOnly: tool.readOnly,
        runsIn: tool.runsIn,
        paths: (args) => tool.paths(args),
        parameters: tool.parameters,
        // Through the gate like every tool: rules, review, secret masking, audit.
        run: async (args, ctx) => {
          const observation = await this.#runTool((sandbox) => sandbox.gate.wrap(tool), args, ctx);
          await this.#noteChanges(tool, args);
          return observation;
        },
      });
      this.#mcpTools.set(name, tool);
    }
    const createToolSearch = this.#createToolSearch;
    if (
      this.#deferred.update([...current.values()]) && !this.#tools.get(TOOL_SEARCH_NAME) &&
      createToolSearch !== undefined
    ) {
      const search = createToolSearch(this.#deferred);
      this.#tools.register({
        name: search.name,
        get description() {
          return search.description;
        },
        readOnly: search.readOnly,
        runsIn: search.runsIn,
        paths: (args) => search.paths(args),
        parameters: search.parameters,
        run: (args, ctx) => this.#runTool((sandbox) => sandbox.gate.wrap(search), args, ctx),
      });
    }
  }

  /**
   * Tells the code index what a call may have changed, for the next search: the paths a file
   * tool wrote, or everything after a command or another tool that may change files (then the
   * search for what deny rules hide runs again too). A set entry or a flag; the files are looked
   * at only when the agent searches or tern reads a file for the model.
   */
  async #noteChanges(tool: Omit<Tool, "run">, args: unknown): Promise<void> {
    if (tool.readOnly) return;
    if (tool.runsIn !== "worker") {
      this.#codeIndex.markChanged();
      // It may have made a link a deny rule matches: where it leads is hidden from now on.
      this.#hiddenPaths.changed();
      return;
    }
    const written = (await tool.paths(args)).filter((path) => path.write);
    this.#codeIndex.markChanged(written.map((path) => path.path));
  }

  async #runTool(
    gated: (sandbox: AgentSandbox) => Tool,
    args: unknown,
    ctx: Parameters<Tool["run"]>[1],
  ): ReturnType<Tool["run"]> {
    let sandbox: AgentSandbox;
    try {
      sandbox = await this.#openSandbox();
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return {
        status: "ERROR",
        code: "EXECUTION_FAILED",
        message: `Cannot start the sandbox: ${detail}`,
      };
    }
    const observation = await gated(sandbox).run(args, ctx);
    const budget = {
      limit: this.#options.config.toolResultChars,
      dir: toolResultsDir(this.#options.session.path),
    };
    return await applyToolResultBudget(observation, ctx.callId ?? "call", budget);
  }

  /**
   * A round's tool results held to half of the model's window together (`fitRound`), saved
   * where long results go.
   */
  #roundFit(config: { contextWindow: number }): RunTurnOptions["fitResults"] {
    const budget = {
      limitTokens: Math.floor(config.contextWindow * ROUND_SHARE),
      dir: toolResultsDir(this.#options.session.path),
    };
    return (results) => fitRound(results, budget);
  }

  /**
   * The code index's read of a workspace file: in the tool worker where bubblewrap confines it
   * (there a folder swapped for a link to a hidden one leads nowhere), else in tern's process.
   */
  async #indexRead(path: string): Promise<string | null | undefined> {
    const { runtime } = await this.#openSandbox();
    const { INDEX_FILE_MAX_BYTES, readSafely } = await import("./code_index_file.ts");
    const worker = runtime.workerKind === "bwrap" ? runtime.worker : undefined;
    if (worker === undefined) return readSafely(this.#options.workspace, path);
    const observation = await worker.call(INDEX_READ, { path, maxBytes: INDEX_FILE_MAX_BYTES }, {
      signal: new AbortController().signal,
      timeoutMs: INDEX_READ_TIMEOUT_MS,
    });
    if (observation.status === "SUCCEEDED") return observation.output;
    return observation.code === "NOT_FOUND" ? undefined : null;
  }

  #openSandbox(how: { startWorker?: boolean } = {}): Promise<AgentSandbox> {
    if (this.#opening) return this.#opening;
    const options = this.#options;
    const { config, workspace, session } = options;
    const resultsDir = toolResultsDir(session.path);
    const abort = new AbortController();
    this.#openAbort = abort;
    // Noted now, not once the code loaded: a turn that starts meanwhile compares with it.
    const permissions = this.#holdPermissions(session);
    const opening = Promise.all([
      import("./agent_sandbox.ts"),
      Deno.mkdir(resultsDir, { recursive: true, mode: 0o700 }),
      this.#hooks.list(),
    ]).then(([{ openAgentSandbox }, , hooks]) => {
      if (abort.signal.aborted) throw new Error("The sandbox was closed while it opened");
      this.#openStarted = true;
      return openAgentSandbox({
        config,
        turnLease: this.#turnLease,
        workspace,
        env: options.env,
        home: options.home,
        // The gate's own events (a reviewer's reason) are masked like the turn's.
        emit: (event) => {
          for (const shown of this.#eventMasking(this.#options.config)(event)) {
            this.#options.emit(shown);
          }
        },
        person: options.person,
        provider: options.provider,
        // A plan's steps are judged against the plan's task (`DetachedTurnOptions.goal`).
        goal: () => this.reviewGoal(),
        recent: () => this.#detachedGoals.length > 0 ? undefined : this.#turnGoal?.context,
        loadTools: this.#loadTools,
        warm: how.startWorker ?? false,
        rules: options.rules,
        hooks,
        transcriptPath: session.path,
        extraRead: [resultsDir],
        permissions,
        onPermissionChange: (change) => {
          session.append({ type: "permission", change });
          this.#holdPermissions(session);
        },
        sessionId: session.id,
        secrets: [...options.mcp?.secrets() ?? [], ...this.#webSecrets],
        signal: abort.signal,
      });
    }).then((sandbox) => {
      phaseMark("sandbox_open");
      // Ids go on from the sandbox before (the model still holds its processes' ids), and what
      // the model was not told of them yet (that they were stopped) comes with the next result.
      const processes = sandbox.runtime.processes;
      if (this.#processesBefore) processes.continueFrom(this.#processesBefore);
      this.#processesBefore = undefined;
      // A resumed session's ids go on after those its conversation names: the run before
      // ended their processes, and the model may still hold their ids.
      processes.resumeAfter(session.state().items.map((item) => item.message));
      this.#sandbox = sandbox;
      options.onSandboxOpen?.(sandbox);
      return sandbox;
    });
    // A failed opening is tried again by the next call rather than remembered.
    opening.catch(() => {
      if (this.#opening === opening) this.#opening = undefined;
    });
    this.#opening = opening;
    return opening;
  }

  /** The permission entries on `session`'s path, noted as what the gate holds. */
  #holdPermissions(session: Session): PermissionChange[] {
    const { permissions } = session.state();
    this.#permissionsHeld = JSON.stringify(permissions);
    return permissions;
  }

  /**
   * Closes the sandbox when the session's permission entries on its path are no longer the
   * ones its gate holds: a rewind or `/tree` moved the leaf to before a grant or approval, or
   * to a branch with others. Its grants, approvals and background processes end with it, and
   * the next call opens it with the path's own (a grant is decided again). Only between turns;
   * every turn checks first.
   */
  async settlePermissions(): Promise<void> {
    if (this.#running) throw new Error("Cannot move the session while a turn runs");
    if (this.#opening === undefined) return;
    const now = JSON.stringify(this.#options.session.state().permissions);
    if (now !== this.#permissionsHeld) await this.#closeSandbox();
  }

  async #closeSandbox(): Promise<void> {
    const opening = this.#opening;
    const started = this.#openStarted;
    const prewarming = this.#prewarming;
    this.#opening = undefined;
    this.#sandbox = undefined;
    this.#openStarted = false;
    this.#permissionsHeld = undefined;
    this.#prewarming = undefined;
    // An opening still under way (warmed at the first token of a turn that needed no tool) is
    // given up: before it made anything there is nothing to wait for, after it cleans up.
    this.#openAbort?.abort();
    this.#openAbort = undefined;
    if (prewarming) {
      // Checks started ahead that no sandbox took end here, not after their owner.
      await prewarming;
      const { settlePrewarm } = await import("../sandbox/prewarm.ts");
      await settlePrewarm();
    }
    if (!opening) return;
    if (!started) {
      opening.catch(() => {});
      return;
    }
    await opening.then(async (sandbox) => {
      try {
        await this.#stopBackground(sandbox);
      } finally {
        await sandbox.close();
      }
    }, () => {});
  }

  /**
   * Stops `sandbox`'s background processes, then tells what they changed among the files that
   * run code on the host since the last turn's end, as a turn's end does (an audit record of
   * tool `background processes`, a `background_host_files` event): what one writes after the
   * last turn's end is reported before it is gone, not lost with its sandbox.
   */
  async #stopBackground(sandbox: AgentSandbox): Promise<void> {
    await sandbox.runtime.processes.close();
    this.#processesBefore = sandbox.runtime.processes.handOver();
    const hostFiles = sandbox.gate.takeHostFileChanges();
    if (hostFiles.length > 0) this.#options.emit({ type: "background_host_files", hostFiles });
  }
}

/**
 * What the model sees of the gated tools before the sandbox exists, with their declarations
 * (a built-in's paths load its implementation, as its call is about to).
 */
function gatedToolSpecs(
  load: BuiltinLoader,
  bashTimeoutMs: number | undefined,
): Array<Omit<Tool, "run">> {
  return [...builtinTools(load, { bashTimeoutMs }), REQUEST_PERMISSIONS_SPEC];
}

/** Characters of a turn's message the AUTO reviewer gets as context beside the person's goal. */
const GIVEN_CONTEXT_CHARS = 4_000;

/** The message a turn's model got, for the reviewer: untrusted context, cut to its length. */
function givenContext(task: string): string {
  const cut = task.length > GIVEN_CONTEXT_CHARS
    ? `${task.slice(0, GIVEN_CONTEXT_CHARS)}… (${
      task.length - GIVEN_CONTEXT_CHARS
    } more characters)`
    : task;
  return "The message the agent was given, beyond the person's goal written by others (attached " +
    `files, a template or skill, another agent), not the person: ${cut}`;
}

/**
 * The person's latest message in the session, for the AUTO reviewer's goal: never a subagent's
 * completion (a user-role message tern delivers, tagged with its run ids), whose text a child
 * read from files and pages.
 */
function lastPersonText(session: Session): string {
  const entry = session.findOnPath((e) =>
    e.type === "message" && e.message.role === "user" && e.mailbox === undefined
  );
  return entry?.type === "message" ? entry.message.content : "";
}

/** The turn a UserPromptSubmit hook blocked: no model call, the reason for the person. */
function blockedTurn(emit: EmitFn, model: string, reason: string): TurnResult {
  const usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
  emit({ type: "turn_start", model, maxRounds: 0 });
  emit({
    type: "turn_end",
    exitReason: "CANCELLED",
    text: "",
    rounds: 0,
    toolCalls: 0,
    usage,
    error: reason,
  });
  return {
    exitReason: "CANCELLED",
    text: "",
    rounds: 0,
    toolCalls: 0,
    usage,
    messages: [],
    error: reason,
  };
}

/** A turn's result (or its turn_end event) with known keys masked in its answer and its error. */
function maskedResult<T extends { text: string; error?: string }>(
  result: T,
  masker: SecretMasker,
): T {
  const text = masker.mask(result.text);
  const error = result.error === undefined ? undefined : masker.mask(result.error);
  if (text === result.text && error === result.error) return result;
  return { ...result, text, ...(error === undefined ? {} : { error }) };
}

/** `observation` with known keys masked in its text (an error may quote the model's words). */
function maskedObservation(observation: Observation, masker: SecretMasker): Observation {
  if (observation.status === "ERROR") {
    const message = masker.mask(observation.message);
    return message === observation.message ? observation : { ...observation, message };
  }
  const output = masker.mask(observation.output);
  return output === observation.output ? observation : { ...observation, output };
}

/**
 * `value` (an event, a session entry) with the keys `masker` knows of masked in every string,
 * but for reasoning its API signed (`signature`, `data`), which the API takes back only as it was
 * sent. Formats (`sk-…`) are left alone here: they could match ids and hashes. Walks without
 * recursion: what the model's server sent (a call's arguments, `extra_content`, reasoning
 * details) may nest thousands of levels deep.
 */
function maskedKnown<T>(value: T, masker: SecretMasker): T {
  // Without a key to look for (a local model), nothing is copied.
  if (masker.longestValue === 0) return value;
  return copyJson(value, (item, { key, parent }) => {
    if (typeof item === "string") return masker.maskKnown(item);
    // An assistant message's signed reasoning: its text, signature and data stay as sent.
    const thinking = key === "thinking" && Array.isArray(item) && isAssistant(parent);
    if (!thinking) return COPY;
    return (item as Record<string, unknown>[]).map((part) => maskedThinking(part, masker));
  }) as T;
}

function isAssistant(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    (value as Record<string, unknown>).role === "assistant";
}

/**
 * One reasoning part with known keys masked; a part its API signed (`signature`, `data`) keeps
 * those and its text as they were (the API accepts it back only so), the rest is masked.
 */
function maskedThinking(
  part: Record<string, unknown>,
  masker: SecretMasker,
): Record<string, unknown> {
  if (part === null || typeof part !== "object") return maskedKnown(part, masker);
  if (part.signature === undefined && part.data === undefined) return maskedKnown(part, masker);
  const { text, signature, data, ...rest } = part;
  return {
    ...maskedKnown(rest, masker),
    text,
    ...(signature === undefined ? {} : { signature }),
    ...(data === undefined ? {} : { data }),
  };
}

/**
 * A call's `arguments` (JSON text) with known keys masked, in the text and in what it means: a key
 * written with a JSON escape (`\u007a…`) is found once the text is parsed.
 */
function maskedArguments(text: string, masker: SecretMasker): string {
  const plain = masker.mask(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(plain);
  } catch {
    return plain;
  }
  const masked = maskedKnown(parsed, masker);
  return JSON.stringify(masked) === JSON.stringify(parsed) ? plain : JSON.stringify(masked);
}

/** The read guard of one rules list, and what it is told the rules hide now. */
interface ReadGuardState {
  rules: readonly PermissionRule[];
  refuse: Promise<ReadRefusal>;
  /** The latest search's answer (WorkspaceHiddenSearch), or why it failed. */
  hidden?: WorkspaceHidden | Error;
}
