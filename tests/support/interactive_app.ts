/**
 * The interactive app with its real parts (app, editor, view, a Conversation on a real session
 * in BYPASS mode, 80 columns) and the in-process scripted model, for tests that type into it.
 */
import { type AppOptions, InteractiveApp } from "../../src/cli/interactive/app.ts";
import { CommandRegistry, type SlashCommand } from "../../src/cli/interactive/commands.ts";
import { resourceCommands } from "../../src/cli/interactive/resource_commands.ts";
import { Conversation } from "../../src/harness/conversation.ts";
import { DEFAULTS } from "../../src/config/mod.ts";
import type { ScriptedProvider } from "../../src/llm/scripted.ts";
import { Session } from "../../src/session/session.ts";
import { Editor } from "../../src/tui/editor.ts";
import { key, textKey } from "../../src/tui/key_event.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { TranscriptView } from "../../src/tui/view.ts";

export interface TestApp {
  app: InteractiveApp;
  conversation: Conversation;
  session: Session;
  editor: Editor;
  /** Every line the app committed to the screen. */
  committed: string[];
  /** Draws the app's frame and returns its lines. */
  frame(): string[];
  /** Types `text` and Enter, and waits until the app is idle. */
  send(text: string): Promise<void>;
  /** Closes the conversation and its session. */
  close(): Promise<void>;
}

/** The app over `commands` in `workspace`, its model `provider`; options override the app's. */
export function testApp(
  options: {
    workspace: string;
    ternHome: string;
    commands: CommandRegistry;
    provider: ScriptedProvider;
    /** The conversation's context window (the config's default when absent). */
    contextWindow?: number;
  } & Partial<Pick<AppOptions, "commandContext" | "prepareMessage" | "onExit" | "now">>,
): TestApp {
  const { workspace, ternHome, provider } = options;
  const session = Session.create(ternHome, { cwd: workspace, ternVersion: "test" });
  const committed: string[] = [];
  let last: string[] = [];
  const theme = themeFor(false);
  const editor = new Editor({});
  const conversation = new Conversation({
    workspace,
    config: {
      ...DEFAULTS,
      contextWindow: options.contextWindow ?? DEFAULTS.contextWindow,
      model: "scripted",
      ternHome,
      mode: "bypass",
      profile: ":workspace",
      profiles: {},
      rules: [],
    },
    provider,
    session,
    rules: [],
    emit: (event) => app.event(event),
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  const app: InteractiveApp = new InteractiveApp({
    screen: {
      commit: (lines) => committed.push(...lines),
      render: (lines) => last = lines,
      columns: () => 80,
    },
    theme,
    view: new TranscriptView({ theme, workspace }),
    editor,
    commands: options.commands,
    status: () => ({
      cwd: workspace,
      model: "scripted",
      thinking: "medium",
      mode: "bypass",
      profile: ":workspace",
      sandbox: "off",
    }),
    contextWindow: () => 100_000,
    commandContext: options.commandContext ?? (() => ({}) as never),
    conversation: () => Promise.resolve(conversation),
    prepareMessage: options.prepareMessage ?? ((text) => Promise.resolve({ text, notes: [] })),
    onExit: options.onExit ?? (() => {}),
    now: options.now,
  });
  return {
    app,
    conversation,
    session,
    editor,
    committed,
    frame: () => {
      app.frame();
      return last;
    },
    send: async (text) => {
      app.key(textKey(text));
      app.key(key("enter"));
      await app.idle;
    },
    close: async () => {
      await conversation.close();
      session.closeOrDiscard();
    },
  };
}

/**
 * A registry of `builtins` and the template and skill commands found for `workspace` and
 * `ternHome` (no home, no rules, no facts), the built-ins' names taken; `warn` gets what
 * discovery says.
 */
export async function commandsWithResources(
  builtins: SlashCommand[],
  folders: { workspace: string; ternHome: string },
  warn: (text: string) => void = () => {},
): Promise<CommandRegistry> {
  const commands = new CommandRegistry(builtins);
  const found = await resourceCommands({
    ...folders,
    home: undefined,
    rules: [],
    memory: () => ({ facts: [], limit: 5 }),
    taken: new Set(builtins.map((command) => command.name)),
    warn,
  });
  for (const command of found) commands.register(command);
  return commands;
}
