/**
 * The interactive session's controller: keys go to the open dialog or the editor, a submitted
 * line is a slash command, a new turn, or (while a turn runs) a steering message queued for the
 * next model boundary. Agent events go through the transcript view: finished lines are written
 * once into scrollback, the rest is the live region (view, editor or dialog, status line).
 */
import type { AgentEvent } from "../../core/events.ts";
import { createEventCleaner } from "../../core/terminal_events.ts";
import { terminalText } from "../../core/terminal_text.ts";
import type { ImagePart, Usage } from "../../core/messages.ts";
import type { KeyEvent } from "../../tui/key_event.ts";
import type { Dialog } from "../../tui/dialog.ts";
import type { Editor } from "../../tui/editor.ts";
import type { TranscriptView } from "../../tui/view.ts";
import type { StatusInfo } from "../../tui/status.ts";
import { statusLine } from "../../tui/status.ts";
import { keptOutputLines } from "../../tui/output_view.ts";
import type { Theme } from "../../tui/theme.ts";
import { truncateToWidth, visibleWidth, wrapTrimmed } from "../../tui/width.ts";
import type { TurnResult } from "../../agent/loop.ts";
import type { Conversation } from "../../harness/conversation.ts";
import { type CommandContext, type CommandRegistry, parseCommandLine } from "./commands.ts";

/** The live region's lines and cursor. */
export interface LiveFrame {
  lines: string[];
  cursor?: { row: number; col: number };
}

/** Draws one committed block at a width in cells. */
export type BlockDraw = (columns: number) => string[];

/** Where the app draws. */
export interface AppScreen {
  /**
   * Writes finished lines into scrollback, once, and draws the live region `next` below them
   * in the same write (no stale live frame in between). `blocks`, when given, are the lines'
   * blocks in order, each drawn at any width from its source (at this width they give `lines`),
   * to redraw the blocks still on the visible screen after a resize.
   */
  commit(lines: string[], next?: LiveFrame, blocks?: BlockDraw[]): void;
  /** Redraws the live region. */
  render(lines: string[], cursor?: { row: number; col: number }): void;
  columns(): number;
  /** The terminal's rows, when there is a live region. */
  rows?(): number;
  /** Clears the visible screen, never the scrollback (for a redraw from the session). */
  clear?(): void;
}

export interface AppOptions {
  screen: AppScreen;
  theme: Theme;
  view: TranscriptView;
  editor: Editor;
  commands: CommandRegistry;
  /** The status line's fixed parts (cwd, model, mode, …), read for every frame. */
  status: () => StatusInfo;
  /** The model's context window in tokens, for the context-used percentage. */
  contextWindow: () => number;
  /** Builds the context slash commands run with. */
  commandContext: (app: InteractiveApp) => CommandContext;
  /** The conversation (connecting to the models may still be under way). */
  conversation: () => Promise<Conversation>;
  /** The person's text as the model gets it (`@path` mentions attached, images named in it). */
  prepareMessage: (
    text: string,
    typed: string,
  ) => Promise<{ text: string; notes: string[]; images?: ImagePart[] }>;
  /** Keeps a submitted line in the input history. */
  remember?: (text: string) => void;
  /** Called once when the person leaves (Ctrl-D, Ctrl-C twice, /quit). */
  onExit: () => void;
  now?: () => number;
  /**
   * The session's transcript as lines at the current width (for Ctrl-L and /redraw), and its
   * blocks at any width.
   */
  transcript?: () => { lines: string[]; blocks?: BlockDraw[] };
}

/** A dialog on screen or waiting its turn, and the answer's receiver. */
interface OpenDialog {
  dialog: Dialog<unknown>;
  resolve: (value: unknown) => void;
  /** When it was first drawn on screen; undefined while it waits behind another. */
  shownAt?: number;
  /** A key arrived too soon after it appeared and was dropped (a hint says so). */
  dropped?: boolean;
}

/**
 * How long after a dialog appears its keys are dropped, in milliseconds: a key typed for the
 * editor (a follow-up message written while the model works) must not answer a question that
 * opened under it, so none of `y`, `a` or Enter counts before the person could have read it.
 * Keys the terminal had buffered when it opened arrive in this time too, and each dropped key
 * starts the time again: a dialog takes keys only after a pause in typing. Only Ctrl-C still
 * acts at once (it cancels, which denies).
 */
export const DIALOG_GUARD_MS = 500;

/** How long a first Ctrl-C on an empty editor waits for the second, in milliseconds. */
const EXIT_CONFIRM_MS = 2_000;

export class InteractiveApp {
  readonly #options: AppOptions;
  /**
   * The dialogs waiting for the person, in the order they were asked: the first is on screen,
   * the others wait their turn (a dialog never changes under the person's keys).
   */
  #dialogs: OpenDialog[] = [];
  #running: AbortController | undefined;
  #turnStarted = 0;
  /** Milliseconds of the running turn spent with a dialog waiting for the person. */
  #turnPaused = 0;
  #dialogSince: number | undefined;
  #queue: string[] = [];
  /** The slash command that runs now, when one does outside a turn. */
  #command: string | undefined;
  /** Stops that command (Esc, Ctrl-C): a long one such as /plan listens. */
  #commandAbort: AbortController | undefined;
  #lastCtrlC = 0;
  #exited = false;
  #usage: { tokens: number; cost?: number; contextTokens?: number; cachePercent?: number } = {
    tokens: 0,
  };
  #hint: string | undefined;
  #hintTimer: ReturnType<typeof setTimeout> | undefined;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #frameScheduled = false;
  #clean = createEventCleaner();
  /** The turn (and the turns its queued messages start), for tests and shutdown. */
  idle: Promise<void> = Promise.resolve();

  constructor(options: AppOptions) {
    this.#options = options;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  get queued(): readonly string[] {
    return this.#queue;
  }

  /** Usage and cost summed over this process's turns, and the last request's context size. */
  get usage(): Readonly<{ tokens: number; cost?: number; contextTokens?: number }> {
    return this.#usage;
  }

  /** Handles one input event. */
  key(event: KeyEvent): void {
    if (this.#exited || event.kind === "report") return;
    const open = this.#dialogs[0];
    if (open) {
      const cancel = event.kind === "key" && event.ctrl && event.name === "c";
      if (!cancel && this.#tooSoon(open)) {
        // The person is still typing: the guard waits for a pause in their keys.
        open.shownAt = this.#now();
        open.dropped = true;
        this.frame();
        return;
      }
      const result = open.dialog.handle(event);
      if (result.done) {
        this.#close(open);
        open.resolve(result.value);
      }
      this.frame();
      return;
    }
    if (event.kind === "key" && this.#special(event)) return;
    const action = this.#options.editor.handle(event);
    if (action.type === "submit") {
      this.#options.remember?.(action.text);
      this.submit(action.text);
    }
    this.frame();
  }

  /**
   * True while `open` has been on screen for less than `DIALOG_GUARD_MS` (or not drawn yet):
   * its keys were typed before the person could have seen it.
   */
  #tooSoon(open: OpenDialog): boolean {
    return open.shownAt === undefined || this.#now() - open.shownAt < DIALOG_GUARD_MS;
  }

  /** Ctrl-C, Esc, Ctrl-D: true when handled here rather than by the editor. */
  #special(event: Extract<KeyEvent, { kind: "key" }>): boolean {
    const { editor } = this.#options;
    if (event.ctrl && event.name === "c") {
      if (this.#running) {
        this.#unqueue();
        this.abort();
      } else if (this.#commandAbort && !this.#commandAbort.signal.aborted) {
        this.#commandAbort.abort();
      } else if (!editor.isEmpty) {
        editor.clear();
      } else if (this.#now() - this.#lastCtrlC < EXIT_CONFIRM_MS) {
        this.exit();
        return true;
      } else {
        this.#lastCtrlC = this.#now();
        this.#hint = "press Ctrl-C again to exit";
        clearTimeout(this.#hintTimer);
        this.#hintTimer = setTimeout(() => {
          this.#hint = undefined;
          this.frame();
        }, EXIT_CONFIRM_MS);
      }
      this.frame();
      return true;
    }
    if (event.ctrl && event.name === "o" && !event.alt) {
      // The last command's whole output, into scrollback (as /output does).
      const kept = this.#options.view.output();
      if (kept) this.#print(keptOutputLines(kept, this.#width(), this.#options.theme));
      else this.notice("No command output yet");
      return true;
    }
    if (
      event.name === "up" && !event.ctrl && !event.shift && this.#queue.length > 0 &&
      (event.alt || editor.isEmpty)
    ) {
      this.#editQueued();
      return true;
    }
    if (event.ctrl && event.name === "l" && !event.alt) {
      this.redraw();
      return true;
    }
    if (event.ctrl && event.name === "d" && editor.isEmpty) {
      this.exit();
      return true;
    }
    if (event.name === "escape" && !event.ctrl && !event.alt && this.#running) {
      this.#unqueue();
      this.abort();
      this.frame();
      return true;
    }
    if (event.name === "escape" && !event.ctrl && !event.alt && this.#commandAbort) {
      this.#commandAbort.abort();
      this.frame();
      return true;
    }
    return false;
  }

  /**
   * A submitted line: a command, a new turn, or a steering message while a turn runs. Nothing
   * once the session has ended (lines still read from a pipe after a signal or /quit).
   */
  submit(text: string): void {
    if (this.#exited || text.trim() === "") return;
    const command = parseCommandLine(text);
    const known = command && this.#options.commands.get(command.name);
    // A template's or a skill's command is a message: it goes on as a turn.
    if (command && known && !known.message) {
      if (this.#running && !known.whileRunning) {
        this.#giveBack(text);
        this.notice(
          `/${known.name} waits for the turn to end: it is back in the editor (Esc stops the turn)`,
          "warning",
        );
        return;
      }
      if (this.#command && !known.whileRunning) {
        this.#giveBack(text);
        this.notice(
          `/${known.name} waits for /${this.#command} to finish: it is back in the editor`,
          "warning",
        );
        return;
      }
      this.#printView(this.#options.view.user(text, this.#width()));
      const alone = !this.#running && !this.#command;
      const controller = new AbortController();
      const run = async () => {
        try {
          await known.run(this.#options.commandContext(this), command.args, controller.signal);
        } catch (error) {
          this.notice(error instanceof Error ? error.message : String(error), "error");
          await this.#commandFailed();
        }
        this.frame();
      };
      if (!alone) {
        run();
        return;
      }
      // A command that changes the session or settings (/compact, /tree, /model…) runs alone.
      this.#command = known.name;
      this.#commandAbort = controller;
      this.idle = run().finally(() => {
        this.#command = undefined;
        this.#commandAbort = undefined;
      });
      return;
    }
    if (command && !known) {
      this.notice(`Unknown command "/${command.name}": /help lists them`, "error");
      // The next line waits for the exit code to be counted.
      const idle = this.idle;
      this.idle = Promise.all([idle, this.#commandFailed()]).then(() => {});
      return;
    }
    if (this.#command) {
      this.#giveBack(text);
      this.notice(
        `Wait for /${this.#command} to finish, then send your message again: it is back in ` +
          "the editor",
        "warning",
      );
      return;
    }
    if (this.#running && known?.message) {
      // A template's or a skill's text is rendered only as a turn of its own: queued, it would
      // reach the model as the bare `/name args` the person typed.
      this.#giveBack(text);
      this.notice(
        `/${known.name} waits for the turn to end: it is back in the editor (Esc stops the turn)`,
        "warning",
      );
      return;
    }
    if (this.#running) {
      this.#queue.push(text);
      this.#options.conversation().then((conversation) => conversation.steered(), () => {});
      this.#options.view.queued([...this.#queue]);
      this.frame();
      return;
    }
    this.idle = this.#turn(text);
  }

  /** A line that cannot run now, back into the editor (before what it holds): nothing is lost. */
  #giveBack(text: string): void {
    const { editor } = this.#options;
    editor.text = editor.isEmpty ? text : `${text}\n\n${editor.text}`;
  }

  /** Stops the running turn: the model call and its tool processes are cancelled. */
  abort(): void {
    this.#running?.abort();
  }

  /**
   * Clears the screen (never the scrollback above it) and prints the session's transcript
   * again at the current width: Ctrl-L and /redraw. Waits for an idle session: a running
   * turn's text is not in the session yet.
   */
  redraw(): void {
    const transcript = this.#options.transcript;
    if (transcript === undefined || this.#options.screen.clear === undefined) return;
    if (this.#running) {
      this.notice("Ctrl-L and /redraw redraw once the turn ends", "warning");
      return;
    }
    this.#options.screen.clear();
    const { lines, blocks } = transcript();
    this.#print(lines, blocks);
  }

  /** Forgets the usage counted so far (a new session): tokens, cost and the context meter. */
  resetUsage(): void {
    this.#usage = { tokens: 0 };
    this.frame();
  }

  /**
   * The person stopped the turn: messages still queued are theirs again, back in the editor
   * (before what it holds) rather than sent as the next turn.
   */
  #unqueue(): void {
    if (this.#queue.length === 0) return;
    const { editor } = this.#options;
    const kept = editor.isEmpty ? [] : [editor.text];
    editor.text = [...this.#drainQueue(), ...kept].join("\n\n");
  }

  /**
   * The last queued message back into the editor (before what it holds), out of the queue: the
   * person edits it and sends it again, or clears it to withdraw it. Up on an empty editor, or
   * Alt+Up whatever the editor holds.
   */
  #editQueued(): void {
    const { editor } = this.#options;
    const last = this.#queue.pop()!;
    this.#options.view.queued([...this.#queue]);
    editor.text = editor.isEmpty ? last : `${last}\n\n${editor.text}`;
    this.frame();
  }

  /**
   * Shows `dialog` in place of the editor (after the dialogs asked before it) until it is done;
   * rejects when `signal` fires first. When the session ends first it resolves with the
   * dialog's `cancelled` answer, at once if it has ended already: nothing waits on a person who
   * has left.
   */
  pick<T>(dialog: Dialog<T>, signal?: AbortSignal): Promise<T> {
    if (this.#exited) return Promise.resolve(dialog.cancelled);
    if (signal?.aborted) return Promise.reject(new Error("cancelled"));
    return new Promise<T>((resolve, reject) => {
      const entry: OpenDialog = { dialog, resolve: resolve as (value: unknown) => void };
      this.#dialogs.push(entry);
      if (this.#running) this.#dialogSince ??= this.#now();
      signal?.addEventListener("abort", () => {
        this.#close(entry);
        this.frame();
        reject(new Error("cancelled"));
      }, { once: true });
      this.frame();
    });
  }

  /** Takes `entry` off the dialogs; when none is left, the turn's clock runs again. */
  #close(entry: OpenDialog): void {
    const at = this.#dialogs.indexOf(entry);
    if (at < 0) return;
    this.#dialogs.splice(at, 1);
    if (this.#dialogs.length === 0) this.#resumeClock();
  }

  /** Writes a notice line into the transcript (its text may come from anywhere: sanitized). */
  notice(text: string, kind: "info" | "warning" | "error" = "info"): void {
    this.#printView(this.#options.view.notice(terminalText(text), kind, this.#width()));
  }

  /**
   * Writes finished lines into the transcript; `blocks` draw them at any width. Lines without
   * `blocks` (a command's, quoting a repository's, a server's or the model's words) are wrapped
   * to the screen here, each row after a line's first indented two cells more than it: a line
   * left to the terminal's own wrap could start a row at column 0 with tern's marks
   * (`✓ bash …`).
   */
  print(lines: string[], blocks?: BlockDraw[]): void {
    if (blocks !== undefined || this.#options.screen.rows === undefined) {
      this.#print(lines, blocks);
      return;
    }
    const draw = (columns: number) => lines.flatMap((line) => printedRows(line, columns));
    this.#print(draw(this.#width()), [draw]);
  }

  /**
   * Feeds one agent event to the view (the conversation's emit). Its strings were written by
   * the model or a tool, so the view gets it through the event cleaner: no escape sequence,
   * control or bidi override reaches the screen, whichever part of the event a line shows.
   */
  event(event: AgentEvent): void {
    if (event.type === "assistant_message" && event.usage) this.#count(event.usage, event.cost);
    const { view } = this.#options;
    const lines: string[] = [];
    const blocks: BlockDraw[] = [];
    for (const safe of this.#clean(event)) {
      lines.push(...view.apply(safe, this.#width()));
      blocks.push(...view.blocks());
    }
    if (event.type === "steering") view.queued([...this.#queue]);
    // The finished lines and the live region after them, in one write.
    if (lines.length > 0) this.#print(lines, blocks);
    else this.#scheduleFrame();
  }

  /**
   * Leaves the session: aborts a running turn and the running command, answers every open
   * dialog with its `cancelled` value (a picker with nothing, the permission question with a
   * denial), so nothing the session waits for can keep the process alive, and tells the owner.
   */
  exit(): void {
    if (this.#exited) return;
    this.#exited = true;
    this.abort();
    this.#commandAbort?.abort();
    const open = this.#dialogs;
    this.#dialogs = [];
    for (const { dialog, resolve } of open) resolve(dialog.cancelled);
    clearInterval(this.#ticker);
    clearTimeout(this.#hintTimer);
    this.#options.onExit();
  }

  /** Redraws the live region now. */
  frame(): void {
    if (this.#exited) return;
    const { lines, cursor } = this.#liveFrame();
    this.#options.screen.render(lines, cursor);
  }

  /** What the live region shows now: the view's live lines, a hint, the dialog or editor, status. */
  #liveFrame(): LiveFrame {
    const { view, editor, theme, screen } = this.#options;
    const width = this.#width();
    // The screen cuts each live row at the terminal's edge: on a terminal narrower than the
    // view's 20 columns, the question's facts and the status line (`unsandboxed`) are drawn at
    // its own width, so no end of theirs is cut away unseen.
    const exact = Math.max(1, screen.columns());
    const lines = view.live(width);
    let cursor: { row: number; col: number } | undefined;
    if (this.#hint) lines.push(theme.yellow(this.#hint));
    const status = statusLine(this.#statusInfo(), exact, theme);
    const open = this.#dialogs[0];
    if (open) {
      // The live region keeps its last rows: the dialog fits itself above the status line.
      // Its guard time starts when it is first drawn (a dialog waiting its turn is not seen).
      open.shownAt ??= this.#now();
      const hint = open.dropped
        ? [theme.yellow("Keys typed as this dialog opened were ignored: answer it now")]
        : [];
      lines.push(...hint);
      const rows = screen.rows?.();
      const room = rows === undefined
        ? undefined
        : Math.max(1, rows - 1 - status.length - hint.length);
      lines.push(...open.dialog.render(exact, room));
    } else {
      const edited = editor.render(width, theme, {
        placeholder: this.#running
          ? "queue a message for the agent…"
          : "ask tern, or / for commands",
      });
      cursor = { row: lines.length + edited.cursor.row, col: edited.cursor.col };
      lines.push(...edited.lines);
    }
    lines.push(...status);
    return { lines, cursor };
  }

  #scheduleFrame(): void {
    if (this.#frameScheduled) return;
    this.#frameScheduled = true;
    setTimeout(() => {
      this.#frameScheduled = false;
      this.frame();
    }, 16);
  }

  #statusInfo(): StatusInfo {
    const info = { ...this.#options.status() };
    info.tokens = this.#usage.tokens;
    if (this.#usage.cost !== undefined) info.cost = this.#usage.cost;
    if (this.#usage.cachePercent !== undefined) info.cachePercent = this.#usage.cachePercent;
    const window = this.#options.contextWindow();
    if (this.#usage.contextTokens !== undefined && window > 0) {
      info.contextPercent = Math.round((this.#usage.contextTokens / window) * 100);
    }
    if (this.#running) {
      // The clock stops while a dialog waits for the person.
      const now = this.#dialogSince ?? this.#now();
      const working = now - this.#turnStarted - this.#turnPaused;
      info.busy = `working ${(working / 1000).toFixed(1)}s`;
      info.hint = "Esc to stop";
    }
    return info;
  }

  /**
   * The exit code of the first message that did not complete (0 while none did): what a session
   * fed through a pipe exits with, as `tern run` would for that message; 2 for a slash command
   * that failed.
   */
  exitCode = 0;

  async #turn(text: string): Promise<void> {
    const controller = new AbortController();
    this.#running = controller;
    this.#turnStarted = this.#now();
    this.#turnPaused = 0;
    this.#dialogSince = undefined;
    this.#ticker = setInterval(() => this.frame(), 100);
    this.#printView(this.#options.view.user(text, this.#width()));
    this.frame();
    let result: TurnResult | undefined;
    try {
      // A template's or a skill's command becomes the text it renders.
      const command = parseCommandLine(text);
      const known = command && this.#options.commands.get(command.name);
      const source = command && known?.message ? await known.message(command.args) : text;
      // Only what the person typed attaches files: `@path` in a repository's template or skill
      // body is its text, not the person's choice.
      const prepared = await this.#options.prepareMessage(source, text);
      for (const note of prepared.notes) this.notice(note, "warning");
      const conversation = await this.#options.conversation();
      result = await conversation.turn(prepared.text, {
        signal: controller.signal,
        steering: () => this.#drainQueue(conversation),
        images: prepared.images,
        // The reviewer judges against what the person typed, not the files or the template's
        // text it brought along.
        goal: text,
      });
    } catch (error) {
      this.notice(error instanceof Error ? error.message : String(error), "error");
      // Loaded only here: the mapping names every domain's error classes.
      const { exitCodeForError } = await import("../exit_codes.ts");
      if (this.exitCode === 0) this.exitCode = exitCodeForError(error);
    } finally {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
      this.#running = undefined;
      if (result?.exitReason === "CANCELLED") this.#options.view.reset();
    }
    if (result !== undefined && result.exitReason !== "COMPLETED" && this.exitCode === 0) {
      const { exitCodeFor } = await import("../exit_codes.ts");
      this.exitCode = exitCodeFor(result.exitReason);
    }
    this.frame();
    // Messages queued after the last model call start the next turn.
    const queued = this.#drainQueue();
    if (queued.length > 0 && !this.#exited) await this.#turn(queued.join("\n\n"));
  }

  /**
   * A slash command failed (unknown, refused its arguments, could not do its work): like a bad
   * command line, it counts as a usage error (2) for the exit code of a session fed through a
   * pipe, unless a message failed before.
   */
  async #commandFailed(): Promise<void> {
    const { EXIT_USAGE } = await import("../exit_codes.ts");
    if (this.exitCode === 0) this.exitCode = EXIT_USAGE;
  }

  /** A dialog closed: the time it waited is not the turn's. */
  #resumeClock(): void {
    if (this.#dialogSince === undefined) return;
    this.#turnPaused += this.#now() - this.#dialogSince;
    this.#dialogSince = undefined;
  }

  /**
   * The queued steering messages, taken for the model; with `conversation`, only as many as
   * its context window holds together: the rest go back into the editor, and the person is told
   * (recorded, a message the window cannot hold would fail every later request).
   */
  #drainQueue(conversation?: Conversation): string[] {
    // The model's boundary takes the messages before the first that mentions a file: `@path` is
    // attached only to a turn's own message, so that one and those after it start the next turn
    // (as steering, the model would get the bare `@path`, the file never attached).
    const cut = conversation === undefined ? -1 : this.#queue.findIndex(mentionsFile);
    const queued = cut < 0 ? this.#queue : this.#queue.slice(0, cut);
    this.#queue = cut < 0 ? [] : this.#queue.slice(cut);
    this.#options.view.queued([...this.#queue]);
    if (conversation === undefined) return queued;
    const taken: string[] = [];
    const back: string[] = [];
    for (const text of queued) {
      try {
        conversation.checkMessage([...taken, text].join("\n\n"));
        taken.push(text);
      } catch (error) {
        back.push(text);
        this.notice(`${(error as Error).message}: the message is back in the editor`, "error");
      }
    }
    if (back.length > 0) {
      const { editor } = this.#options;
      editor.text = [...back, ...editor.isEmpty ? [] : [editor.text]].join("\n\n");
      this.frame();
    }
    return taken;
  }

  #count(usage: Usage, cost: number | undefined): void {
    const total = this.#usage;
    total.tokens += usage.inputTokens + usage.outputTokens;
    if (cost !== undefined) total.cost = (total.cost ?? 0) + cost;
    total.contextTokens = usage.inputTokens + usage.outputTokens;
    total.cachePercent = usage.inputTokens > 0
      ? Math.min(100, (usage.cachedTokens / usage.inputTokens) * 100)
      : undefined;
  }

  #print(lines: string[], blocks?: BlockDraw[]): void {
    const { screen } = this.#options;
    // The view never draws narrower than 20 columns (see #width).
    const drawn = blocks?.map((draw): BlockDraw => (columns) => draw(Math.max(20, columns)));
    if (lines.length > 0 && !this.#exited) screen.commit(lines, this.#liveFrame(), drawn);
    else if (lines.length > 0) screen.commit(lines, undefined, drawn);
    else this.frame();
  }

  /** Prints what the view's last call returned, with its blocks for a resize. */
  #printView(lines: string[]): void {
    this.#print(lines, this.#options.view.blocks());
  }

  #width(): number {
    return Math.max(20, this.#options.screen.columns());
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

/** Whether `text` holds an `@path` mention (at its start or after whitespace). */
function mentionsFile(text: string): boolean {
  return /(?:^|\s)@\S/.test(text);
}

/** `line` as rows of at most `width` cells, the rows after the first indented two cells more. */
function printedRows(line: string, width: number): string[] {
  if (visibleWidth(line) <= width) return [line];
  const indent = " ".repeat(Math.min(/^ */.exec(line)![0].length, Math.floor(width / 2)));
  const rows = wrapTrimmed(line.slice(indent.length), Math.max(1, width - indent.length - 2));
  return rows.map((row, i) => truncateToWidth(`${indent}${i === 0 ? "" : "  "}${row}`, width));
}
