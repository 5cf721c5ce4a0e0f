/**
 * `tern` with no task: the interactive session. Wires the terminal (display, editor, app) to
 * the session controller (`controller.ts`, on the harness's agent session). The prompt is drawn
 * before anything slow happens; the models, the sandbox, the memory, the workspace baseline and
 * the syntax highlighter are connected or loaded in the background (no network call on the
 * start path).
 */
import { Editor } from "../../tui/editor.ts";
import { History } from "../../tui/history.ts";
import { lazyKeyMasker } from "../../sandbox/secrets.ts";
import { completePath, expandMentions } from "../../tui/mentions.ts";
import { themeFor } from "../../tui/theme.ts";
import { loadRenderers } from "../../tui/renderers.ts";
import { warmWidth } from "../../tui/width.ts";
import { TranscriptView } from "../../tui/view.ts";
import type { RunFlags } from "../run.ts";
import { colorWanted, readEnv, resolveWorkspace } from "../process_env.ts";
import { UsageError } from "../errors.ts";
import { InteractiveApp } from "./app.ts";
import { CommandRegistry } from "./commands.ts";
import { outputCommand } from "./output_command.ts";
import { agentsCommand } from "./agents_command.ts";
import { procsCommand } from "./procs_command.ts";
import { openDisplay } from "./display.ts";
import { SessionController } from "./controller.ts";
import { showWarningsIn } from "../../core/warnings.ts";
import { attachNamedImages, namedImages } from "./image_mentions.ts";

/** The keys, told once to someone who has never sent a message (an empty input history). */
export const FIRST_START_HINT = "Enter sends · Shift+Enter new line · / commands · @ files · " +
  "Esc stops the agent · Ctrl-O command output · Ctrl-D quits";

/** Runs the interactive session until the person leaves; returns the exit code. */
export async function runInteractive(flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const interactive = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  if (!interactive && flags.session?.resume === "") {
    // The picker would wait for keys that never come, and the piped lines with it.
    throw new UsageError(
      "-r (--resume) without an id needs a terminal to choose the session: use -c (the newest) or " +
        "-r <id> (`tern sessions list` lists them)",
    );
  }
  const theme = themeFor(colorWanted(Deno.stdout.isTerminal()));
  const view = new TranscriptView({ theme, workspace });
  // The first frame draws without the renderers (tui/renderers.ts): they load right after it,
  // and a conversation waits for them. Then the frame is drawn again with exact widths, and
  // the first use of their Unicode tables is paid, not in the first answer.
  let renderers: Promise<void> | undefined;
  const rendered = () =>
    renderers ??= loadRenderers().then(() => {
      app.frame();
      warmWidth();
    }, (error) => app.notice(`Cannot load the renderers: ${error}`, "error"));
  const controller = await SessionController.open(flags, workspace, {
    interactive,
    theme,
    view,
    columns: () => display.columns(),
    rendered,
  });
  // The keys tern holds are masked in the history too, beside the key formats.
  const history = await History.open(`${controller.config.ternHome}/history.jsonl`, 1000, {
    mask: lazyKeyMasker(() => controller.config),
  });
  const commands = new CommandRegistry([
    outputCommand((n) => view.output(n)),
    agentsCommand(() => controller.subagents),
    procsCommand(),
  ]);
  const editor = new Editor({
    history,
    commands: () => commands.list().map(({ name, description }) => ({ name, description })),
    paths: (partial) => completePath(workspace, partial),
    onChange: () => app.frame(),
  });
  let exited!: () => void;
  const done = new Promise<void>((resolve) => exited = resolve);
  /** Line mode: stdin has not ended yet. */
  let reading = !interactive;
  const display = await openDisplay({
    interactive,
    onKey: (event) => app.key(event),
    onResize: () => app.frame(),
    onEnd: () => {
      reading = false;
      app.exit();
    },
  });
  const app: InteractiveApp = new InteractiveApp({
    screen: display,
    theme,
    view,
    editor,
    commands,
    status: () => controller.status(),
    transcript: () => controller.transcript(),
    contextWindow: () => controller.config.contextWindow,
    commandContext: (self) => controller.context(self, () => commands.list()),
    conversation: () => controller.conversation(),
    prepareMessage: async (text, typed) => {
      const named = namedImages(typed);
      // What the model's own tools may not read is not attached for it either.
      const { modelReadGuard } = await import("../../harness/read_guard.ts");
      const refuse = await modelReadGuard({
        workspace,
        ternHome: controller.config.ternHome,
        home: readEnv("HOME"),
        rules: controller.config.rules,
      });
      // The keys tern holds are masked in what a mention attaches, as in the read tool's output.
      const conversation = await controller.conversation();
      const expanded = await expandMentions(text, workspace, {
        skip: named.mentions,
        from: typed,
        refuse,
        mask: (content) => conversation.maskKnownKeys(content),
      });
      const attached = await attachNamedImages(
        workspace,
        controller.config,
        named.paths,
        refuse,
      );
      const notes = [...expanded.errors, ...attached.notes];
      return { text: expanded.text, notes, images: attached.images };
    },
    remember: (text) => history.add(text).catch(() => {}),
    onExit: () => exited(),
  });
  controller.attach(app);
  // A warning written to stderr would land in the middle of the drawn screen.
  const restoreWarnings = interactive
    ? showWarningsIn((text) => app.notice(text, "warning"))
    : undefined;

  // A closed terminal or a kill ends the session the orderly way: the turn is stopped, the
  // sandbox and its temporary folder are removed, the session file is closed.
  const hangup = () => app.exit();
  const signals: Deno.Signal[] = interactive ? ["SIGHUP", "SIGTERM"] : [];
  for (const signal of signals) Deno.addSignalListener(signal, hangup);
  // In line mode Ctrl-C reaches tern as a signal rather than a key, and it, SIGTERM or SIGHUP
  // stop the session as they stop `tern run`: the turn ends, no further line is read, and tern
  // exits 128 + the signal's number (unless a message failed before); a second one exits at once.
  const interrupts = interactive
    ? undefined
    : (await import("../interrupts.ts")).listenForInterrupts();
  interrupts?.signal.addEventListener("abort", () => {
    if (app.exitCode === 0) app.exitCode = interrupts.exitCode();
    app.exit();
  });

  app.frame();
  // After the first frame the prompt is usable; everything else loads behind it, one part
  // after another (each blocks input while its modules evaluate), so keys typed meanwhile are
  // drawn in between: the renderers, the slash commands, then the models and the MCP servers.
  // A message sent before connects at once.
  const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  const ready = rendered().then(nextTurn).then(() => controller.loadExtras()).then((extra) => {
    for (const command of extra) {
      if (!commands.register(command)) {
        app.notice(
          `The prompt template or skill "/${command.name}" is not used: a built-in command has that name`,
          "warning",
        );
      }
    }
    app.frame();
  });
  ready.catch(() => {}).then(nextTurn).then(() => controller.preload());
  // Lines written into scrollback stay: they wait for the renderers.
  await rendered();
  const opening = controller.opening();
  for (const warning of opening.warnings) app.notice(warning, "warning");
  if (opening.lines.length > 0) app.print(opening.lines, opening.blocks);
  else if (interactive && history.entries.length === 0) app.notice(FIRST_START_HINT);
  await ready.catch((error) => app.notice(`Cannot load the slash commands: ${error}`, "error"));
  if (controller.pickAtStart) app.submit("/resume");
  if (!interactive) display.lines((line) => app.submit(line), () => app.idle);

  await done;
  // From here a signal (Ctrl-C sent as one, SIGTERM, SIGHUP) cuts the close's SessionEnd hooks
  // short; in line mode a second one after the first still exits at once.
  const cut = new AbortController();
  const cutClose = () => cut.abort();
  const closeSignals = (["SIGINT", "SIGTERM", "SIGHUP"] as const).filter((signal) => {
    try {
      Deno.addSignalListener(signal, cutClose);
      return true;
    } catch {
      return false; // A platform without it: the hooks' time limit still bounds the close.
    }
  });
  for (const signal of signals) Deno.removeSignalListener(signal, hangup);
  // The exit answered every open dialog as cancelled: a command waiting on one has ended.
  await app.idle.catch(() => {});
  // Someone who left at once gets no servers or sandbox started behind the shutdown.
  await controller.close(cut.signal);
  for (const signal of closeSignals) Deno.removeSignalListener(signal, cutClose);
  interrupts?.[Symbol.dispose]();
  display.close();
  restoreWarnings?.();
  // An empty session is removed as it closes: nothing to continue, so nothing is promised.
  const kept = await Deno.lstat(controller.session.path).then(() => true, () => false);
  if (kept) {
    console.error(
      `tern: session ${controller.session.id.slice(0, 8)} (continue it with tern -c)`,
    );
  }
  // Fed through a pipe, the session fails when a message did, as `tern run` would.
  let code = interactive ? 0 : app.exitCode;
  // Output that could not be written (a full disk) fails it too.
  if (code === 0 && display.failed?.()) code = (await import("../exit_codes.ts")).EXIT_FAILURE;
  // So does input that held no message at all for a new session (a script whose input went
  // missing); a resumed one has shown its transcript, which is what it was started for.
  const resumed = flags.session?.continue === true || flags.session?.resume !== undefined;
  if (code === 0 && display.noInput?.() && !resumed) {
    console.error(
      "tern: No message on stdin: without a terminal, tern reads one message per line from " +
        'stdin. Give it some (echo "fix the tests" | tern), or run tern run "<task>"',
    );
    code = (await import("../exit_codes.ts")).EXIT_USAGE;
  }
  // The read of stdin would keep the process alive until the writer closes the pipe: a session
  // that ended before its input (a signal, /quit) ends the process too, as `tern child` does.
  if (reading) Deno.exit(code);
  return code;
}
