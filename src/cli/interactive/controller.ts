/**
 * The interactive session's state: the agent session (config, session file, models, MCP
 * servers, sandbox and conversation, from the harness), what the status line shows of the
 * sandbox, the services loaded behind the first prompt, and what slash commands may change.
 * The terminal side (display, editor, app) is wired in `start.ts`.
 */
import type { SubagentHost } from "../../harness/subagents/host.ts";
import type { TernConfig } from "../../config/mod.ts";
import type { AgentEvent } from "../../core/events.ts";
import type { AgentSandbox } from "../../harness/agent_sandbox.ts";
import { type AgentSession, openAgentSession } from "../../harness/agent_session.ts";
import type { Conversation } from "../../harness/conversation.ts";
import type { McpManager } from "../../mcp/manager.ts";
import type { AskPerson } from "../../sandbox/review.ts";
import type { Session } from "../../session/session.ts";
import type { StatusInfo } from "../../tui/status.ts";
import type { Theme } from "../../tui/theme.ts";
import type { TranscriptView } from "../../tui/view.ts";
import { lazyKeyMasker } from "../../sandbox/secrets.ts";
import { oneAtATime } from "../ask_person.ts";
import { readEnv } from "../process_env.ts";
import type { RunFlags } from "../run.ts";
import type { InteractiveApp } from "./app.ts";
import type { BackgroundServices } from "./background.ts";
import type { CommandContext, SlashCommand } from "./commands.ts";
import { transcriptBlock } from "./replay_lines.ts";

/** What the controller needs of the terminal side. */
export interface ControllerUi {
  /** Whether a person is at a terminal (dialogs can be shown). */
  interactive: boolean;
  theme: Theme;
  view: TranscriptView;
  /** The terminal's width in cells. */
  columns(): number;
  /** Loads the renderers (once); a conversation waits for them. */
  rendered(): Promise<void>;
}

/** The interactive session's state, in one place; its methods are what the app calls. */
export class SessionController {
  /** Set by `open()`, before anything can reach the controller. */
  #agent!: AgentSession;
  readonly #ui: ControllerUi;
  readonly #home: string | undefined;
  /** Set once the app exists (`attach()`); the agent's callbacks reach it through here. */
  #app: InteractiveApp | undefined;
  /** Warnings given before the app was attached (opening the session): shown once it is. */
  #early: string[] = [];
  #sandbox: StatusInfo["sandbox"] = "starting";
  #services: BackgroundServices | undefined;
  #leaving = false;
  /** The session was opened for a picker (`--resume` without an id): nothing to replay. */
  readonly #pickAtStart: boolean;
  /**
   * Masks the keys tern holds now and the key formats in what is shown of a session, as
   * `tern sessions show` does: a session keeps a key unmasked when tern did not hold it then.
   */
  readonly #mask = lazyKeyMasker(() => this.#agent.config);

  private constructor(ui: ControllerUi, pickAtStart: boolean) {
    this.#ui = ui;
    this.#home = readEnv("HOME");
    this.#pickAtStart = pickAtStart;
  }

  /**
   * Opens the agent session without connecting it (the prompt is drawn first): the config,
   * the session file, the sandbox settings.
   * @throws {ConfigError} for bad settings, {SessionChoiceError} for a session that cannot be
   * used.
   */
  static async open(
    flags: RunFlags,
    workspace: string,
    ui: ControllerUi,
  ): Promise<SessionController> {
    const pickAtStart = flags.session?.resume === "";
    const controller = new SessionController(ui, pickAtStart);
    // The agent's callbacks run only once the app is attached: no turn runs before.
    controller.#agent = await openAgentSession({
      workspace,
      flags: flags.config,
      session: pickAtStart ? {} : flags.session ?? {},
      connect: "later",
      emit: (event: AgentEvent) => controller.#app?.event(event),
      person: ui.interactive
        ? oneAtATime((request, signal) => controller.#ask(request, signal))
        : undefined,
      warn: (text) => controller.#warn(text),
      onSandboxOpen: (sandbox) => controller.#sandboxOpened(sandbox),
      consolidation: "background",
      memory: () => controller.#services?.facts() ?? [],
      watchMcp: (manager) => controller.#watchMcp(manager),
      subagents: true,
    });
    if (controller.#agent.config.noSandbox) controller.#sandbox = "off";
    return controller;
  }

  /** The app the controller tells about events, notices and dialogs. */
  attach(app: InteractiveApp): void {
    this.#app = app;
    for (const text of this.#early.splice(0)) app.notice(text, "warning");
  }

  #warn(text: string): void {
    if (this.#app === undefined) this.#early.push(text);
    else this.#app.notice(text, "warning");
  }

  /** The session's subagents, once the models are connected. */
  get subagents(): SubagentHost | undefined {
    return this.#agent.subagents;
  }

  get workspace(): string {
    return this.#agent.workspace;
  }

  get config(): TernConfig {
    return this.#agent.config;
  }

  get session(): Session {
    return this.#agent.session;
  }

  /** The status line's fixed parts. */
  status(): StatusInfo {
    const config = this.#agent.config;
    return {
      cwd: this.#agent.workspace,
      home: this.#home,
      model: config.model,
      provider: config.provider,
      thinking: config.thinking,
      mode: config.mode,
      profile: config.profile,
      sandbox: this.#sandbox,
    };
  }

  /**
   * The conversation, once the models are connected and the renderers loaded. A failed
   * connection (an unknown provider, a missing key) is reported at the turn that needed it
   * and tried again at the next (after a /model, say).
   */
  async conversation(): Promise<Conversation> {
    const [conversation] = await Promise.all([this.#agent.connect(), this.#ui.rendered()]);
    return conversation;
  }

  /**
   * What the opening session shows first: its warnings, then its transcript (unless a picker
   * chooses the session).
   */
  opening(): {
    warnings: readonly string[];
    lines: string[];
    blocks?: Array<(width: number) => string[]>;
  } {
    const state = this.#agent.openedState;
    const { view, theme } = this.#ui;
    const shown = state.items.length > 0 && !this.#pickAtStart
      ? transcriptBlock(state, view, theme, this.#ui.columns(), { mask: this.#mask })
      : { lines: [] };
    return { warnings: this.#agent.session.warnings, ...shown };
  }

  /** Whether the person asked to pick the session (`--resume` without an id). */
  get pickAtStart(): boolean {
    return this.#pickAtStart;
  }

  /**
   * Loads the slash commands that need the background services, starts those services, and
   * returns the commands to register.
   */
  async loadExtras(): Promise<SlashCommand[]> {
    const [
      { backgroundServices },
      { settingsCommands },
      { sessionCommands },
      { mcpCommands },
      { planCommands },
      { rewindCommand },
      { pinCommand },
    ] = await Promise.all([
      import("./background.ts"),
      import("./settings_commands.ts"),
      import("./session_commands.ts"),
      import("./mcp_commands.ts"),
      import("./plan_commands.ts"),
      import("./rewind_command.ts"),
      import("./pin_commands.ts"),
    ]);
    const agent = this.#agent;
    const services = backgroundServices({ workspace: agent.workspace, config: agent.config });
    this.#services = services;
    if (!this.#leaving) services.start();
    const deps = {
      models: () => services.models(agent.config),
      memory: () => services.memory(),
      diff: () => services.diff(),
    };
    const mcp = mcpCommands({
      opened: () => agent.mcp(),
      trust: async (servers) => {
        const [{ trustServers }, { checkStillAsRead }] = await Promise.all([
          import("../../mcp/trust.ts"),
          import("../../harness/mcp_setup.ts"),
        ]);
        const where = { ternHome: agent.config.ternHome, workspace: agent.workspace };
        await checkStillAsRead(servers, { ...where, keyVariables: agent.config.keyVariables });
        await trustServers(where.ternHome, where.workspace, servers);
      },
    });
    const builtins = [
      ...settingsCommands(deps),
      ...sessionCommands(),
      ...mcp,
      ...planCommands(),
      rewindCommand(),
      pinCommand(),
    ];
    const [{ resourceCommands }, { lazyKeyMasker }] = await Promise.all([
      import("./resource_commands.ts"),
      import("../../sandbox/secrets.ts"),
    ]);
    const resources = await resourceCommands({
      workspace: agent.workspace,
      ternHome: agent.config.ternHome,
      home: readEnv("HOME"),
      rules: agent.config.rules,
      memory: () => ({ facts: services.facts(), limit: agent.config.memoryFacts }),
      personal: () => agent.config.serverChosenBy === undefined,
      mask: lazyKeyMasker(() => agent.config),
      taken: new Set(builtins.map((command) => command.name)),
      warn: (text) => this.#warn(text),
      window: async () => {
        const conversation = await this.conversation();
        return {
          tools: conversation.toolSpecs(),
          messages: agent.session.state().items.map((item) => item.message),
          contextWindow: agent.config.contextWindow,
          lastRequest: this.#app?.usage.contextTokens,
        };
      },
    }).catch((error) => {
      this.#app?.notice(`Cannot read the prompt templates and skills: ${error}`, "warning");
      return [];
    });
    return [...builtins, ...resources];
  }

  /**
   * Starts the MCP servers and connects the models, then opens the sandbox, behind the
   * prompt; not once the person is leaving.
   */
  preload(): void {
    if (this.#leaving) return;
    this.#agent.mcp().catch(() => {});
    this.#agent.preload();
  }

  /** The context slash commands run with, for `app`. */
  context(app: InteractiveApp, commands: () => readonly SlashCommand[]): CommandContext {
    const agent = this.#agent;
    const { theme } = this.#ui;
    return {
      workspace: agent.workspace,
      theme,
      get config() {
        return agent.config;
      },
      get session() {
        return agent.session;
      },
      conversation: () => this.conversation(),
      print: (lines) => app.print(lines),
      notice: (text, kind) => app.notice(text, kind),
      mask: this.#mask,
      pick: (dialog) =>
        this.#ui.interactive ? app.pick(dialog) : Promise.reject(
          new Error(
            "Cannot show a picker in line mode: give the command its arguments (/help lists them)",
          ),
        ),
      canAsk: this.#ui.interactive,
      width: () => this.#ui.columns(),
      configure: async (change) => {
        const { reopens } = await agent.configure(change);
        if (reopens) this.#sandbox = agent.config.noSandbox ? "off" : "starting";
      },
      switchSession: async (next, options) => {
        const other = next !== agent.session;
        // The same session with its leaf moved (/rewind, /tree) goes through the agent too: a
        // grant or approval left behind on the old path ends now, with what it started.
        const { note } = await agent.switchSession(next);
        if (note !== undefined) app.notice(note, "warning");
        if (other) {
          // Tokens, cost and the context meter were the other session's.
          app.resetUsage();
          if (agent.connected) this.#sandbox = agent.config.noSandbox ? "off" : "starting";
          this.#services?.resetBaseline();
        }
        if (options?.replay) {
          const { lines, blocks } = transcriptBlock(
            agent.session.state(),
            this.#ui.view,
            theme,
            this.#ui.columns(),
            { mask: this.#mask },
          );
          app.print(lines, blocks);
        }
      },
      commands,
      exit: () => app.exit(),
      redraw: () => app.redraw(),
    };
  }

  /**
   * The session's transcript as lines at the terminal's width (Ctrl-L, /redraw), and its
   * blocks at any width.
   */
  transcript(): { lines: string[]; blocks: Array<(width: number) => string[]> } {
    return transcriptBlock(
      this.#agent.session.state(),
      this.#ui.view,
      this.#ui.theme,
      this.#ui.columns(),
      { mask: this.#mask },
    );
  }

  /**
   * Closes everything in the harness's order (conversation and sandbox, session file, MCP
   * servers); nothing more starts. `signal` (a signal that came during the close) cuts the
   * SessionEnd hooks short.
   */
  async close(signal?: AbortSignal): Promise<void> {
    this.#leaving = true;
    await this.#agent.close(signal);
  }

  /** Asks the person in a dialog, with the proposed diff and the real paths involved. */
  async #ask(...[request, signal]: Parameters<AskPerson>): ReturnType<AskPerson> {
    const [{ permissionDialog }, { proposedDiff }, { realPathFacts }] = await Promise.all([
      import("../../tui/dialogs.ts"),
      import("./proposed_diff.ts"),
      import("./real_paths.ts"),
    ]);
    const workspace = this.#agent.workspace;
    // Read as tern reads any file for the model: a link to a secret shows no diff, and why.
    const refuse = await this.#agent.conversation.readRefusal();
    const proposed = proposedDiff(request, workspace, { refuse });
    const realPaths = realPathFacts(request, workspace);
    const dialog = permissionDialog(request, {
      theme: this.#ui.theme,
      ...(proposed === undefined ? {} : proposed),
      realPaths,
    });
    return await this.#app!.pick(dialog, signal);
  }

  #sandboxOpened(sandbox: AgentSandbox): void {
    const unavailable = sandbox.runtime.shellKind === "unavailable";
    this.#sandbox = this.#agent.config.noSandbox
      ? "off"
      : unavailable
      ? "unsandboxed"
      : "bubblewrap";
    if (unavailable) {
      this.#app?.notice(sandbox.runtime.shellNote ?? "bubblewrap is not available", "warning");
    }
    this.#app?.frame();
  }

  /** Tells the person which project servers wait for trust, and each failure once. */
  #watchMcp(manager: McpManager): void {
    const app = this.#app;
    const told = new Set<string>();
    const untrusted = manager.status().filter((s) => s.state === "UNTRUSTED");
    for (const status of untrusted) {
      if (status.trustable === false) {
        // No trust command would start it: say why instead of suggesting one.
        app?.notice(
          `The project's MCP server "${status.name}" cannot start: ${status.error}`,
          "warning",
        );
      } else if (status.error?.startsWith("needs trust again")) {
        // A server trusted before whose definition or script changed: say what changed.
        app?.notice(`The project's MCP server "${status.name}" ${status.error}`, "warning");
      }
    }
    const trustable = untrusted.filter((s) => s.trustable !== false);
    if (trustable.length > 0) {
      const names = trustable.map((s) => s.name).join(", ");
      app?.notice(
        `The project's MCP servers ${names} do not start until you trust them: /mcp shows ` +
          "what they run, /mcp trust <server> starts one",
        "warning",
      );
    }
    manager.onChange(() => {
      for (const status of manager.status()) {
        if (status.state !== "FAILED" || told.has(status.name)) continue;
        told.add(status.name);
        this.#app?.notice(`${status.label} failed: ${status.error}`, "error");
      }
    });
  }
}
