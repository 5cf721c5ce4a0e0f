/**
 * The prompt editor's model: multi-line text with a grapheme cursor, readline-style keys,
 * history, collapsed pastes and Tab completion. Pure: no I/O except through the callbacks it is
 * given, and `render()` only returns lines.
 */
import type { KeyEvent } from "./key_event.ts";
import type { HistoryNavigator } from "./history.ts";
import {
  acceptSuffix,
  type CommandInfo,
  commandItems,
  commonPrefix,
  completable,
  type CompletionItem,
  type CompletionList,
  type CompletionTarget,
  completionTarget,
} from "./editor_completion.ts";
import { Pastes } from "./editor_paste.ts";
import { TextBuffer } from "./editor_buffer.ts";
import { stepLeft, stepRight, wordLeft, wordRight } from "./editor_text.ts";
import { type EditorFrame, layoutWidth, renderEditor, type RenderOptions } from "./editor_view.ts";
import type { Theme } from "./theme.ts";

export type { CommandInfo, CompletionItem, EditorFrame, RenderOptions };

/** What a key did: the message to send, a change to draw, or nothing (the key is not ours). */
export type EditorAction =
  | { type: "submit"; text: string }
  | { type: "changed" }
  | { type: "ignored" };

/** Where the editor gets history and completions, and how it tells about late changes. */
export interface EditorOptions {
  /** Walked with up on the first row and down on the last. */
  history?: HistoryNavigator;
  /** Slash commands offered when the text starts with "/". */
  commands?: () => CommandInfo[];
  /** Workspace paths starting with `partial`, for `@` mentions (directories end in "/"). */
  paths?: (partial: string) => Promise<string[]>;
  /** Called when the text changed outside `handle()` (an async completion arrived). */
  onChange?: () => void;
}

type KeyPress = Extract<KeyEvent, { kind: "key" }>;

const CHANGED: EditorAction = { type: "changed" };
const IGNORED: EditorAction = { type: "ignored" };
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Multi-line prompt editor. Enter submits (the text with pastes expanded; the editor is then
 * cleared; blank text is `ignored`); Shift+Enter, Alt+Enter, Ctrl+Enter and Ctrl+J insert a
 * newline, and so does Enter right after a trailing backslash (which is removed). Keys the
 * editor does not use (Ctrl+C, Ctrl+D, Esc with no list open…) are `ignored` for the caller.
 */
export class Editor {
  #buffer = new TextBuffer();
  #pastes = new Pastes();
  #options: EditorOptions;
  #completion: CompletionList | undefined;
  #pending: Promise<void> = Promise.resolve();
  /** Bumped by every input, so a completion that arrives late sees it is stale. */
  #version = 0;
  /** Column (cells) kept while moving up and down through rows of different lengths. */
  #goal: number | undefined;
  /** Text cells per row at the last render; up/down move by these visual rows. */
  #content = Infinity;
  #scroll = 0;

  constructor(options: EditorOptions = {}) {
    this.#options = options;
  }

  /** The text as shown (paste markers not expanded). Setting it puts the cursor at the end. */
  get text(): string {
    return this.#buffer.text;
  }

  set text(value: string) {
    this.#buffer.text = clean(value);
    this.#completion = undefined;
    this.#version++;
  }

  /** True when there is no text. */
  get isEmpty(): boolean {
    return this.#buffer.text === "";
  }

  /** The cursor: line index and UTF-16 offset in that line. */
  get cursor(): { row: number; col: number } {
    return { row: this.#buffer.row, col: this.#buffer.col };
  }

  /** The open completion list (candidates and the selected index), if any. */
  get completions(): { items: readonly CompletionItem[]; selected: number } | undefined {
    const list = this.#completion;
    return list && { items: list.items, selected: list.selected };
  }

  /** Settles when the last requested completion has been applied (or dropped as stale). */
  whenSettled(): Promise<void> {
    return this.#pending;
  }

  /** Empties the editor, forgets pastes and stops walking history. */
  clear(): void {
    this.text = "";
    this.#pastes.clear();
    this.#scroll = 0;
    this.#options.history?.reset();
  }

  /** Applies one input event. */
  handle(event: KeyEvent): EditorAction {
    if (event.kind === "report") return IGNORED;
    this.#version++;
    if (event.kind === "paste") {
      this.#completion = undefined;
      const text = clean(event.text);
      this.#buffer.insert(this.#pastes.collapse(text) ?? text);
      return CHANGED;
    }
    if (this.#completion) {
      const action = this.#handleList(event);
      if (action) return action;
    }
    const vertical = event.name === "up" || event.name === "down" ||
      (event.ctrl && (event.name === "p" || event.name === "n"));
    const action = this.#handleKey(event);
    if (!vertical) this.#goal = undefined;
    if (action === CHANGED && !this.#completion && event.name !== "escape") this.#menu();
    return action;
  }

  /** The slash menu: opens while the first word is a "/" command, filtered by what is typed. */
  #menu(): void {
    const { lines, row, col } = this.#buffer;
    const target = completionTarget(lines, row, col);
    if (target?.kind !== "command" || !this.#options.commands) return;
    const items = completable(commandItems(this.#options.commands(), target.partial));
    if (items.length === 0) return;
    // The command named exactly as typed comes first: Enter runs it.
    const exact = items.findIndex((item) => item.value === target.partial);
    if (exact > 0) items.unshift(...items.splice(exact, 1));
    this.#completion = { target, items, selected: 0, live: true };
  }

  /** The editor's lines for a terminal `width` cells wide; see `RenderOptions`. */
  render(width: number, theme: Theme, options: RenderOptions = {}): EditorFrame {
    // Commands load after the first frame: a slash menu opened before shows them once they do.
    if (this.#completion?.live) {
      const selected = this.#completion.items[this.#completion.selected]?.value;
      this.#completion = undefined;
      this.#menu();
      const list = this.#completion as CompletionList | undefined;
      if (list) list.selected = Math.max(0, list.items.findIndex((i) => i.value === selected));
    }
    this.#content = layoutWidth(width, options.prompt ?? "› ").content;
    const { frame, scroll } = renderEditor(
      {
        lines: this.#buffer.lines,
        row: this.#buffer.row,
        col: this.#buffer.col,
        atoms: (line) => this.#pastes.spans(line),
        completion: this.#completion,
        scroll: this.#scroll,
      },
      width,
      theme,
      options,
    );
    this.#scroll = scroll;
    return frame;
  }

  #handleList(event: KeyPress): EditorAction | undefined {
    const list = this.#completion!;
    const plain = !event.ctrl && !event.alt;
    const count = list.items.length;
    if (list.live && plain && event.name === "tab" && !event.shift) {
      // Tab in the slash menu completes as it does without the menu.
      this.#completion = undefined;
      return this.#complete();
    }
    if (plain && (event.name === "tab" || event.name === "up" || event.name === "down")) {
      const back = event.name === "up" || (event.name === "tab" && event.shift);
      list.selected = (list.selected + (back ? count - 1 : 1)) % count;
      return CHANGED;
    }
    this.#completion = undefined;
    if (plain && !event.shift && event.name === "enter") {
      const { value } = list.items[list.selected];
      // Enter in the slash menu runs the chosen command.
      if (list.live) return this.#submitCommand(list.target, value);
      this.#replace(list.target, value, true);
      return CHANGED;
    }
    if (event.name === "escape") return CHANGED;
    return undefined;
  }

  #handleKey(event: KeyPress): EditorAction {
    const { name, ctrl, alt, shift } = event;
    const buffer = this.#buffer;
    const { line, col } = buffer;
    const atoms = this.#pastes.spans(line);
    const word = ctrl || alt;
    if (name === "text" || (name === "space" && !word)) {
      buffer.insert(name === "text" ? clean(event.text ?? "") : " ");
    } else if (name === "enter" && !shift && !word) {
      if (!line.endsWith("\\") || col !== line.length) return this.#submit();
      buffer.deleteBack(col - 1);
      buffer.insert("\n");
    } else if (name === "enter" || (ctrl && name === "j")) {
      buffer.insert("\n");
    } else if (name === "tab") {
      return shift || word ? IGNORED : this.#complete();
    } else if (name === "backspace") {
      buffer.deleteBack(word ? wordLeft(line, col, atoms) : stepLeft(line, col, atoms));
    } else if (ctrl && name === "w") {
      buffer.deleteBack(wordLeft(line, col, atoms));
    } else if (ctrl && name === "u") {
      buffer.deleteBack(col === 0 ? -1 : 0);
    } else if (name === "delete" && !word) {
      buffer.deleteForward(stepRight(line, col, atoms));
    } else if (ctrl && name === "k") {
      buffer.deleteForward(col === line.length ? -1 : line.length);
    } else if ((name === "left" && word) || (alt && name === "b")) {
      buffer.moveTo(wordLeft(line, col, atoms), -1);
    } else if ((name === "right" && word) || (alt && name === "f")) {
      buffer.moveTo(wordRight(line, col, atoms), 1);
    } else if (name === "left" || (ctrl && name === "b")) {
      buffer.moveTo(stepLeft(line, col, atoms), -1);
    } else if (name === "right" || (ctrl && name === "f")) {
      buffer.moveTo(stepRight(line, col, atoms), 1);
    } else if (name === "home" || (ctrl && name === "a")) {
      buffer.moveTo(0, 0);
    } else if (name === "end" || (ctrl && name === "e")) {
      buffer.moveTo(line.length, 0);
    } else if (name === "up" || (ctrl && name === "p")) {
      return this.#vertical(-1);
    } else if (name === "down" || (ctrl && name === "n")) {
      return this.#vertical(1);
    } else {
      return IGNORED;
    }
    return CHANGED;
  }

  /** Up or down one visual row; past the first or last row, through history. */
  #vertical(step: -1 | 1): EditorAction {
    this.#goal ??= this.#buffer.column(this.#content);
    const atoms = (line: string) => this.#pastes.spans(line);
    if (this.#buffer.moveVertical(step, this.#content, this.#goal, atoms)) return CHANGED;
    return this.#recall(step);
  }

  /** Older (`-1`) or newer (`1`) history entry; the cursor ends its first or last line. */
  #recall(step: -1 | 1): EditorAction {
    const history = this.#options.history;
    const entry = step < 0 ? history?.previous(this.text) : history?.next();
    if (entry === undefined) return IGNORED;
    this.text = entry;
    if (step < 0) this.#buffer.place(0, this.#buffer.lines[0].length);
    this.#goal = undefined;
    return CHANGED;
  }

  #submitCommand(target: CompletionTarget, value: string): EditorAction {
    this.#buffer.replace(target.row, target.start, target.end, value);
    return this.#submit();
  }

  #submit(): EditorAction {
    const value = this.#pastes.expand(this.text);
    if (value.trim() === "") return IGNORED;
    this.clear();
    return { type: "submit", text: value };
  }

  /** Tab: completes a slash command now, or asks for paths and completes when they arrive. */
  #complete(): EditorAction {
    const { lines, row, col } = this.#buffer;
    const target = completionTarget(lines, row, col);
    if (target?.kind === "command" && this.#options.commands) {
      return this.#offer(target, commandItems(this.#options.commands(), target.partial))
        ? CHANGED
        : IGNORED;
    }
    if (target?.kind !== "path" || !this.#options.paths) return IGNORED;
    const version = this.#version;
    this.#pending = this.#options.paths(target.partial).then(
      (paths) => {
        if (version !== this.#version) return;
        if (this.#offer(target, paths.map((path) => ({ value: path })))) this.#options.onChange?.();
      },
      () => {},
    );
    return CHANGED;
  }

  /** Inserts the only candidate, or the common prefix and opens the list; false when none. */
  #offer(target: CompletionTarget, offered: CompletionItem[]): boolean {
    const items = completable(offered);
    if (items.length === 0) return false;
    if (items.length === 1) {
      this.#replace(target, items[0].value, true);
      return true;
    }
    const prefix = commonPrefix(items.map((item) => item.value));
    const value = prefix.length > target.partial.length ? prefix : target.partial;
    this.#replace(target, value, false);
    this.#completion = {
      target: { ...target, end: target.start + value.length },
      items,
      selected: 0,
    };
    return true;
  }

  /** Replaces the target token with `value` (plus a space after a finished non-directory). */
  #replace(target: CompletionTarget, value: string, finished: boolean): void {
    const inserted = finished ? value + acceptSuffix(value) : value;
    this.#buffer.replace(target.row, target.start, target.end, inserted);
  }
}

/** Pasted or typed text without carriage returns and control characters (tabs kept). */
function clean(value: string): string {
  return value.replace(/\r\n?/g, "\n").replace(CONTROL, "");
}
