/**
 * `tern` with no task: the interactive session. The prompt is drawn before anything slow
 * happens; the models, the sandbox worker, the memory, the workspace baseline and the syntax
 * highlighter are connected or loaded in the background (no network call on the start path).
 */
import { loadConfig, type TernConfig } from "../../config/mod.ts";
import type { AgentEvent } from "../../core/events.ts";
import type { AskPerson } from "../../sandbox/review.ts";
import { Editor } from "../../tui/editor.ts";
import { History } from "../../tui/history.ts";
import { completePath, expandMentions } from "../../tui/mentions.ts";
import { themeFor, wantsColor } from "../../tui/theme.ts";
import { loadRenderers } from "../../tui/renderers.ts";
import { warmWidth } from "../../tui/width.ts";
import { TranscriptView } from "../../tui/view.ts";
import type { StatusInfo } from "../../tui/status.ts";
import { checkSandboxConfig } from "../../harness/sandbox_config.ts";
import type { Conversation } from "../../harness/conversation.ts";
import type { RunFlags } from "../run.ts";
import { readEnv, resolveWorkspace } from "../process_env.ts";
import {
  applySessionSettings,
  openRunSession,
  UNNAMED_PROVIDER,
} from "../../harness/run_session.ts";
import { InteractiveApp } from "./app.ts";
import { type CommandContext, CommandRegistry } from "./commands.ts";
import { transcriptLines } from "./replay_lines.ts";
import { openDisplay } from "./display.ts";
import { oneAtATime } from "../ask_person.ts";
import type { BackgroundServices } from "./background.ts";
import type { McpManager } from "../../mcp/manager.ts";
import type { OpenedMcp } from "../../harness/mcp_setup.ts";

/** Runs the interactive session until the person leaves; returns the exit code. */
export async function runInteractive(flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const loaded = await loadConfig({ cwd: workspace, flags: flags.config });
  const sources = { ...loaded.sources };
  const home = readEnv("HOME");
  const rules = await checkSandboxConfig(loaded.config, workspace, home);
  const pickAtStart = flags.session?.resume === "";
  let session = await openRunSession(pickAtStart ? {} : flags.session ?? {}, {
    ternHome: loaded.config.ternHome,
    workspace,
  });
  const first = session;
  // Replaying a long session is the costly part of opening it: once for the whole start.
  const opened = session.state();
  let config: TernConfig = applySessionSettings(loaded.config, sources, opened);
  const interactive = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  const theme = themeFor(wantsColor(Deno.stdout.isTerminal(), readEnv("NO_COLOR")));
  const view = new TranscriptView({ theme, workspace });
  const history = await History.open(`${config.ternHome}/history.jsonl`);
  const commands = new CommandRegistry();
  const editor = new Editor({
    history,
    commands: () => commands.list().map(({ name, description }) => ({ name, description })),
    paths: (partial) => completePath(workspace, partial),
    onChange: () => app.frame(),
  });
  // Loaded after the first frame, with the slash commands that use them.
  let services: BackgroundServices | undefined;
  let sandboxState: StatusInfo["sandbox"] = config.noSandbox ? "off" : "starting";
  let exited!: () => void;
  const done = new Promise<void>((resolve) => exited = resolve);
  const display = await openDisplay({
    interactive,
    onKey: (event) => app.key(event),
    onResize: () => app.frame(),
    onEnd: () => app.exit(),
  });

  const person: AskPerson | undefined = interactive
    ? oneAtATime(async (request, signal) => {
      const [{ permissionDialog }, { proposedDiff }, { realPathFacts }] = await Promise.all([
        import("../../tui/dialogs.ts"),
        import("./proposed_diff.ts"),
        import("./real_paths.ts"),
      ]);
      const diff = await proposedDiff(request, workspace);
      const realPaths = realPathFacts(request, workspace);
      return await app.pick(permissionDialog(request, { theme, diff, realPaths }), signal);
    })
    : undefined;

  // The MCP servers start behind the first prompt; a turn waits only for those still starting.
  let mcpOpening: Promise<OpenedMcp> | undefined;
  const openedMcp = () =>
    mcpOpening ??= import("../../harness/mcp_setup.ts").then(async ({ openMcp, killOnExit }) => {
      const opened = await openMcp({
        ternHome: config.ternHome,
        workspace,
        warn: (text) => app.notice(text, "warning"),
      });
      if (opened.manager) {
        watchMcp(opened.manager);
        killOnExit(opened.manager);
      }
      opened.manager?.start();
      return opened;
    });
  const watchMcp = (manager: McpManager) => {
    const told = new Set<string>();
    const untrusted = manager.status().filter((s) => s.state === "UNTRUSTED");
    // A server trusted before whose definition or script changed: say what changed.
    for (const status of untrusted) {
      if (status.error?.startsWith("needs trust again")) {
        app.notice(`The project's MCP server "${status.name}" ${status.error}`, "warning");
      }
    }
    if (untrusted.length > 0) {
      const names = untrusted.map((s) => s.name).join(", ");
      app.notice(
        `The project's MCP servers ${names} do not start until you trust them: /mcp shows ` +
          "what they run, /mcp trust <server> starts one",
        "warning",
      );
    }
    manager.onChange(() => {
      for (const status of manager.status()) {
        if (status.state !== "FAILED" || told.has(status.name)) continue;
        told.add(status.name);
        app.notice(`MCP server "${status.name}" failed: ${status.error}`, "error");
      }
    });
  };

  // The first frame draws without the renderers (tui/renderers.ts): they load right after it,
  // and a conversation waits for them. Then the frame is drawn again with exact widths, and
  // the first use of their Unicode tables (about 40 ms) is paid, not in the first answer.
  let renderers: Promise<void> | undefined;
  const rendered = () =>
    renderers ??= loadRenderers().then(() => {
      app.frame();
      warmWidth();
    }, (error) => app.notice(`Cannot load the renderers: ${error}`, "error"));
  let connecting: Promise<Conversation> | undefined;
  const connect = (): Promise<Conversation> =>
    connecting ??= Promise.all([
      import("../../harness/models.ts"),
      import("../../harness/conversation.ts"),
      import("../process_env.ts"),
      rendered(),
    ]).then(
      async ([{ connectModels }, { Conversation }, { shellSourceEnv }]) => {
        const state = session === first ? opened : session.state();
        const { setup, config: used } = await connectModels(config, sources, state);
        config = used;
        // A bad MCP config is reported (by /mcp and once here) and the session goes on.
        const mcp = await openedMcp().then((opened) => opened.manager, (error) => {
          app.notice(`MCP: ${error instanceof Error ? error.message : error}`, "error");
          return undefined;
        });
        const conversation = new Conversation({
          workspace,
          config,
          provider: setup.router,
          session,
          rules,
          emit: (event: AgentEvent) => app.event(event),
          person,
          env: shellSourceEnv(),
          home,
          memory: () => services?.memorySection(),
          mcp,
          onSandboxOpen: (sandbox) => {
            sandboxState = config.noSandbox
              ? "off"
              : sandbox.runtime.shellKind === "unavailable"
              ? "unsandboxed"
              : "bubblewrap";
            if (sandbox.runtime.shellKind === "unavailable") {
              app.notice(sandbox.runtime.shellNote ?? "bubblewrap is not available", "warning");
            }
            app.frame();
          },
        });
        return conversation;
      },
    );
  // A failed connection (an unknown provider, a missing key) is reported at the next turn and
  // tried again then (after a /model, say).
  const conversation = () =>
    connect().catch((error) => {
      connecting = undefined;
      throw error;
    });

  /**
   * `settings` as a connection takes them: a connection made without a named provider reports
   * itself as the unnamed one, which is no name to connect with again.
   */
  const connectable = (settings: TernConfig): TernConfig =>
    settings.provider === UNNAMED_PROVIDER ? { ...settings, provider: undefined } : settings;

  const context = (self: InteractiveApp): CommandContext => ({
    workspace,
    theme,
    get config() {
      return config;
    },
    get session() {
      return session;
    },
    conversation,
    print: (lines) => self.print(lines),
    notice: (text, kind) => self.notice(text, kind),
    pick: (dialog) => self.pick(dialog),
    width: () => display.columns(),
    configure: async (change) => {
      let next: TernConfig = { ...config, ...change };
      const nextSources = { ...sources };
      if (change.model !== undefined) nextSources.model = { layer: "flag", flag: "/model" };
      if (change.provider !== undefined) nextSources.provider = { layer: "flag", flag: "/model" };
      // A model or provider that cannot be used is refused before anything changes.
      let router: Conversation["provider"] | undefined;
      if (change.model !== undefined || change.provider !== undefined) {
        const { connectModels } = await import("../../harness/models.ts");
        const connected = await connectModels(connectable(next), nextSources);
        next = connected.config;
        router = connected.setup.router;
      }
      config = next;
      Object.assign(sources, nextSources);
      if (!connecting) return;
      const current = await conversation();
      await current.update(router ? { config, provider: router } : { config });
      if (change.profile !== undefined || change.mode !== undefined) {
        sandboxState = config.noSandbox ? "off" : "starting";
        current.warm().catch(() => {});
      }
    },
    switchSession: async (next, options) => {
      if (next !== session) {
        session.closeOrDiscard();
        session = next;
        const state = session.state();
        const restored = applySessionSettings(config, {}, state);
        let router: Conversation["provider"] | undefined;
        if (restored.model !== config.model || restored.provider !== config.provider) {
          // The session's model needs its own connection; one that cannot be made (a key
          // missing here) leaves the current model in place, with a word about it.
          const { connectModels } = await import("../../harness/models.ts");
          try {
            const connected = await connectModels(connectable(restored), sources, state);
            config = connected.config;
            router = connected.setup.router;
          } catch (error) {
            config = { ...restored, model: config.model, provider: config.provider };
            self.notice(`Keeping ${config.model}: ${(error as Error).message}`, "warning");
          }
        } else {
          config = restored;
        }
        if (connecting) {
          const current = await conversation();
          await current.update(
            router ? { session, config, provider: router } : { session, config },
          );
          sandboxState = config.noSandbox ? "off" : "starting";
          current.warm().catch(() => {});
        }
        services?.resetBaseline();
      }
      if (options?.replay) {
        self.print(transcriptLines(session.state(), view, theme, display.columns()));
      }
    },
    commands: () => commands.list(),
    exit: () => self.exit(),
  });

  const app: InteractiveApp = new InteractiveApp({
    screen: display,
    theme,
    view,
    editor,
    commands,
    status: () => ({
      cwd: workspace,
      home,
      model: config.model,
      provider: config.provider,
      thinking: config.thinking,
      mode: config.mode,
      profile: config.profile,
      sandbox: sandboxState,
    }),
    contextWindow: () => config.contextWindow,
    commandContext: context,
    conversation,
    prepareMessage: async (text) => {
      const expanded = await expandMentions(text, workspace);
      return { text: expanded.text, notes: expanded.errors };
    },
    remember: (text) => history.add(text).catch(() => {}),
    onExit: () => exited(),
  });

  /** The slash commands and the services behind them, registered once loaded. */
  async function loadExtras(): Promise<BackgroundServices> {
    const [
      { backgroundServices },
      { settingsCommands },
      { sessionCommands },
      { mcpCommands },
      { planCommands },
    ] = await Promise.all([
      import("./background.ts"),
      import("./settings_commands.ts"),
      import("./session_commands.ts"),
      import("./mcp_commands.ts"),
      import("./plan_commands.ts"),
    ]);
    const loaded = backgroundServices({ workspace, ternHome: config.ternHome });
    const deps = {
      models: () => loaded.models(config),
      memory: () => loaded.memory(),
      diff: () => loaded.diff(),
    };
    const mcp = mcpCommands({
      opened: openedMcp,
      trust: async (servers) => {
        const { trustServers } = await import("../../mcp/trust.ts");
        await trustServers(config.ternHome, workspace, servers);
      },
    });
    const extra = [...settingsCommands(deps), ...sessionCommands(), ...mcp, ...planCommands()];
    for (const command of extra) {
      commands.register(command);
    }
    return loaded;
  }

  // A closed terminal or a kill ends the session the orderly way: the turn is stopped, the
  // sandbox and its temporary folder are removed, the session file is closed.
  const hangup = () => app.exit();
  // In line mode Ctrl-C reaches tern as a signal rather than a key.
  const signals: Deno.Signal[] = interactive
    ? ["SIGHUP", "SIGTERM"]
    : ["SIGHUP", "SIGTERM", "SIGINT"];
  for (const signal of signals) Deno.addSignalListener(signal, hangup);

  app.frame();
  // After the first frame the prompt is usable; everything else loads behind it, one part
  // after another (each blocks input for tens of milliseconds while its modules evaluate), so
  // keys typed meanwhile are drawn in between: the renderers, the slash commands, then the
  // models and the MCP servers. A message sent before connects at once.
  const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  let leaving = false;
  const ready = rendered().then(nextTurn).then(loadExtras).then((loaded) => {
    services = loaded;
    if (!leaving) loaded.start();
  });
  ready.catch(() => {}).then(nextTurn).then(() => {
    // Someone who left at once gets no servers or sandbox started behind the shutdown.
    if (leaving) return;
    openedMcp().catch(() => {});
    connect().then((c) => c.warm()).catch(() => {});
  });
  // Lines written into scrollback stay: they wait for the renderers.
  await rendered();
  for (const warning of session.warnings) app.notice(warning, "warning");
  if (opened.items.length > 0 && !pickAtStart) {
    app.print(transcriptLines(opened, view, theme, display.columns()));
  }
  await ready.catch((error) => app.notice(`Cannot load the slash commands: ${error}`, "error"));
  if (pickAtStart) app.submit("/resume");
  if (!interactive) display.lines((line) => app.submit(line), () => app.idle);

  await done;
  leaving = true;
  for (const signal of signals) Deno.removeSignalListener(signal, hangup);
  await app.idle.catch(() => {});
  if (connecting) await connecting.then((c) => c.close(), () => {});
  await mcpOpening?.then((opened) => opened.manager?.close(), () => {});
  display.close();
  session.closeOrDiscard();
  console.error(`tern: session ${session.id.slice(0, 8)} (continue it with tern -c)`);
  return 0;
}
