/**
 * The editor's frame: logical lines soft-wrapped under a prompt, scrolled to keep the cursor
 * visible, paste markers highlighted, the completion list below. Pure: state in, lines out.
 */
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
  state.lines.forEach((line, index) => {
    const wrapped = wrapLine(line, layout.content);
    if (index === state.row) {
      const at = rowOf(wrapped, state.col);
      cursorRow = rows.length + at;
      cursorCol = promptWidth + textWidth(line.slice(wrapped[at].start, state.col));
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
    const text = state.lines[row.line];
    return fit(prefix + styleRow(text, row, state.atoms(text), theme), width);
  });
  return {
    frame: {
      lines: [...lines, ...below],
      cursor: { row: cursorRow - scroll, col: Math.min(cursorCol, width - 1) },
    },
    scroll,
  };
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
