/**
 * The editor's frame: logical lines soft-wrapped under a prompt, scrolled to keep the cursor
 * visible, paste markers highlighted, the completion list below. Pure: state in, lines out.
 */
import { visibleText } from "../core/terminal_text.ts";
import { type CompletionList, renderCompletions } from "./editor_completion.ts";
import { rowOf, type Span, textWidth, wrapLine } from "./editor_text.ts";
import type { Theme } from "./theme.ts";
import { truncateToWidth, visibleWidth } from "./width.ts";

/** How `Editor.render()` draws. */
export interface RenderOptions {
  /** First-line prompt (may be styled); default "› ". Later rows are indented by its width. */
  prompt?: string;
  /** Dimmed hint shown when the editor is empty. */
  placeholder?: string;
  /** Most text rows shown; the view scrolls to the cursor beyond it. Default 10. */
  maxRows?: number;
}

/** Lines to print and where the terminal cursor goes, in cells within those lines. */
export interface EditorFrame {
  lines: readonly string[];
  cursor: { row: number; col: number };
}

/** What the view needs from the editor. */
export interface ViewState {
  lines: readonly string[];
  row: number;
  col: number;
  atoms: (line: string) => Span[];
  completion: CompletionList | undefined;
  /** First visible row from the previous frame, to scroll as little as possible. */
  scroll: number;
}

/** One visual row: a wrapped piece of logical line `line`. */
interface VisualRow extends Span {
  line: number;
}

/** Cells for text in a row at `width`, keeping one cell for the cursor after the last character. */
export function layoutWidth(width: number, prompt: string): { content: number; prompt: string } {
  const promptWidth = visibleWidth(prompt);
  if (width - promptWidth - 1 >= 2) return { content: width - promptWidth - 1, prompt };
  return { content: Math.max(1, width - 1), prompt: "" };
}

/** The frame, and the scroll position to remember for the next one. */
export function renderEditor(
  state: ViewState,
  width: number,
  theme: Theme,
  options: RenderOptions,
): { frame: EditorFrame; scroll: number } {
  const layout = layoutWidth(width, options.prompt ?? "› ");
  const promptWidth = visibleWidth(layout.prompt);
  const indent = " ".repeat(promptWidth);
  const maxRows = Math.max(1, options.maxRows ?? 10);
  const below = state.completion ? renderCompletions(state.completion, width, theme) : [];
  if (state.lines.length === 1 && state.lines[0] === "") {
    const hint = options.placeholder
      ? theme.dim(truncateToWidth(options.placeholder, layout.content))
      : "";
    return {
      frame: {
        lines: [fit(layout.prompt + hint, width), ...below],
        cursor: { row: 0, col: promptWidth },
      },
      scroll: 0,
    };
  }
  const rows: VisualRow[] = [];
  let cursorRow = 0;
  let cursorCol = promptWidth;
  // Each line as drawn: controls and invisible characters made visible (`shownLine`).
  const shownLines = state.lines.map(shownLine);
  shownLines.forEach(({ text: line, at: shownAt }, index) => {
    const wrapped = wrapLine(line, layout.content);
    if (index === state.row) {
      const col = shownAt(state.col);
      const at = rowOf(wrapped, col);
      cursorRow = rows.length + at;
      cursorCol = promptWidth + textWidth(line.slice(wrapped[at].start, col));
    }
    for (const span of wrapped) rows.push({ line: index, ...span });
  });
  let scroll = Math.min(state.scroll, cursorRow);
  if (cursorRow >= scroll + maxRows) scroll = cursorRow - maxRows + 1;
  scroll = Math.max(0, Math.min(scroll, rows.length - maxRows));
  const visible = rows.slice(scroll, scroll + maxRows);
  const lines = visible.map((row, i) => {
    const first = row.line === 0 && row.start === 0;
    let prefix = first ? layout.prompt : indent;
    if (promptWidth > 0 && i === 0 && scroll > 0) prefix = theme.gray("↑") + indent.slice(1);
    if (promptWidth > 0 && i === visible.length - 1 && scroll + visible.length < rows.length) {
      prefix = theme.gray("↓") + indent.slice(1);
    }
    const source = state.lines[row.line];
    const { text, at } = shownLines[row.line];
    const atoms = state.atoms(source).map((atom) => ({ start: at(atom.start), end: at(atom.end) }));
    return fit(prefix + styleRow(text, row, atoms, theme), width);
  });
  return {
    frame: {
      lines: [...lines, ...below],
      cursor: { row: cursorRow - scroll, col: Math.min(cursorCol, width - 1) },
    },
    scroll,
  };
}

/**
 * What the editor draws as its code point or control picture rather than as itself: C0 and C1
 * controls (tab aside, drawn as a space), DEL, bidi controls and marks, and the invisible
 * characters that carry no glyph of an ordinary script (zero-width space, word joiner and the
 * invisible operators, BOM, soft hyphen, Mongolian vowel separator, tags). The joiners and
 * variation selectors that build emoji stay as they are. A terminal draws the others as nothing
 * or obeys them, so text could be sent that the person never saw. Line and paragraph separators
 * (drawn as a blank, read as a line break) and the variation selectors no emoji uses
 * (U+FE00-FE0D, U+E0100-E01EF) are drawn as code too, and so is a joiner or selector right after
 * another: a run of them after one emoji draws as that emoji alone, and each can carry a byte of
 * text a model reads ("emoji smuggling").
 */
const SHOWN_AS_CODE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0a-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufe00-\ufe0d\ufeff\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/u;
/** The joiners and variation selectors emoji are built with: drawn as code when they follow one. */
const EMOJI_JOINER = /[\u200c\u200d\ufe0e\ufe0f]/u;
const JOINER_RUN =
  /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}][\ufe0e\ufe0f]|[\u200c\u200d][\u200c\u200d\ufe0e\ufe0f]/u;

/**
 * `line` as the editor draws it, and `at`, which maps an offset in `line` to the same place in
 * the drawn text: each character of `SHOWN_AS_CODE` as `visibleText()` shows it (`␛`,
 * `⟨U+202E⟩`), so what the person sends is what they see.
 */
function shownLine(line: string): { text: string; at: (offset: number) => number } {
  if (!SHOWN_AS_CODE.test(line) && !JOINER_RUN.test(line)) {
    return { text: line, at: (offset) => offset };
  }
  const offsets: number[] = [];
  let text = "";
  let previous = "";
  for (let i = 0; i < line.length;) {
    const char = String.fromCodePoint(line.codePointAt(i)!);
    for (let k = 0; k < char.length; k++) offsets[i + k] = text.length;
    const run = EMOJI_JOINER.test(char) && JOINER_RUN.test(previous + char);
    text += run || SHOWN_AS_CODE.test(char) ? visibleText(char) : char;
    previous = char;
    i += char.length;
  }
  offsets[line.length] = text.length;
  return { text, at: (offset) => offsets[Math.max(0, Math.min(offset, line.length))] };
}

/** The row's text with tabs shown as spaces and atoms (paste markers) in cyan. */
function styleRow(line: string, row: Span, atoms: Span[], theme: Theme): string {
  let out = "";
  let at = row.start;
  for (const atom of atoms) {
    const start = Math.max(atom.start, row.start);
    const end = Math.min(atom.end, row.end);
    if (start >= end) continue;
    out += plain(line.slice(at, start)) + theme.cyan(plain(line.slice(start, end)));
    at = end;
  }
  return out + plain(line.slice(at, row.end));
}

function plain(text: string): string {
  return text.includes("\t") ? text.replaceAll("\t", " ") : text;
}

/** Guard for widths too small for a prompt and a wide character. */
function fit(line: string, width: number): string {
  return visibleWidth(line) <= width ? line : truncateToWidth(line, width, "");
}
