/**
 * A call's arguments in full, for the person who approves it (the dialog's [v] view, `tern run
 * --mode ask`).
 */
import { indentedJson } from "../core/indented_json.ts";
import { visibleText } from "../core/terminal_text.ts";
import type { ReviewRequest } from "../sandbox/review.ts";
import { wrapText, wrapTrimmed } from "./width.ts";

/**
 * `args` as indented JSON lines, every string in full, made visible (`visibleText()`: controls,
 * invisible and blank characters shown, never obeyed; JSON already escapes line breaks), the
 * top-level fields named in `omit` left out. No lines for nothing left. Never throws.
 */
export function argumentLines(args: unknown, omit: readonly string[] = []): string[] {
  if (args === undefined) return [];
  let value = args;
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    value = Object.fromEntries(Object.entries(args).filter(([name]) => !omit.includes(name)));
    if (Object.keys(value as object).length === 0) return [];
  }
  // Indented as long as that stays small: the arguments are the model's, and indenting
  // a deep nest of many items multiplies their size.
  const json = indentedJson(value, "compact");
  return json.split("\n").map((line) => {
    const indent = /^ */.exec(line)![0];
    return indent + visibleText(line.slice(indent.length));
  });
}

/** Arguments a diff shows whole. */
export const EDIT_TEXTS = ["old_string", "new_string", "content", "edits"];

/**
 * The top-level arguments the facts (or the diff) show whole: the full view leaves them out.
 * The caller must show `request.summary` whole, never cut (a cut command would hide its tail
 * from both places): a field counts as shown only when all of it is.
 */
export function shownElsewhere(request: ReviewRequest, hasDiff: boolean): string[] {
  const { args, summary } = request;
  if (args === null || typeof args !== "object") return [];
  return Object.entries(args).filter(([name, value]) =>
    (typeof value === "string" && shownInSummary(value, summary)) ||
    (hasDiff && EDIT_TEXTS.includes(name))
  ).map(([name]) => name);
}

/** Whether `value` is the summary or one of the words it ends with (a path a fact shows). */
export function shownInSummary(value: string, summary: string): boolean {
  return value !== "" &&
    (value === summary || summary.endsWith(` ${value}`) || summary.includes(` ${value} `));
}

/**
 * The model's reason for a call, as rows of at most `width` cells for a question: its
 * whitespace collapsed to single spaces and every blank or invisible character shown
 * (`visibleText()`: a run of braille blanks reads `⟨68 × U+2800⟩`), after `label` on the first
 * row, every later row indented by four spaces. So the model's words cannot line up a row of
 * their own that starts where a row of the question does (`? Allow …`, `[y] allow once`).
 * `reason` must have passed `terminalText()`; `style` paints the reason's words.
 */
export function modelReasonRows(
  label: string,
  reason: string,
  width: number,
  style: (text: string) => string = (text) => text,
): string[] {
  const words = visibleText(reason.replace(/\s+/g, " ").trim());
  const rows = wrapText(`${label} ${style(words)}`, Math.max(8, width - 4));
  return rows.map((row, index) => index === 0 ? row : `    ${row}`);
}

/** What starts every row of a question that quotes words tern did not write. */
export const QUOTE_MARK = "│";

/**
 * Words tern did not write (the model's reason for a call, a rule's or hook's note), as rows of
 * at most `width` cells for the permission dialog: `label` and the words after it, whitespace
 * collapsed to single spaces and every blank or invisible character shown (`visibleText()`),
 * each row behind a quote mark (`│ `). So no row of them starts where a row of the dialog does
 * (`[y] allow once`, `›[n] deny`, `─ Allow …`, a fact or tern's reason), and no run of spaces
 * can rebuild the choice row's look. `text` must have passed `terminalText()`; `mark` paints
 * the quote mark, `style` the words.
 */
export function quotedRows(
  label: string,
  text: string,
  width: number,
  options: { mark?: (text: string) => string; style?: (text: string) => string } = {},
): string[] {
  const { mark = (text: string) => text, style = (text: string) => text } = options;
  const words = visibleText(text.replace(/\s+/g, " ").trim());
  const said = words === "" ? label : `${label} ${style(words)}`;
  // Three cells for the mark and its space: a terminal may draw `│` two cells wide.
  return wrapTrimmed(said, Math.max(4, width - 3)).map((row) => `${mark(QUOTE_MARK)} ${row}`);
}

/**
 * `text` as rows of at most `width` cells for a question, as {@linkcode modelReasonRows} shows
 * the model's reason but without a label: whitespace collapsed, every blank or invisible
 * character shown, every row after the first indented by four spaces. For text that quotes what
 * tern does not write (tern's reason quotes the command's words): no row of it can start where
 * a row of the question does. `style` paints the words.
 */
export function shownRows(
  text: string,
  width: number,
  style: (text: string) => string = (text) => text,
): string[] {
  const rows = wrapText(
    style(visibleText(text.replace(/\s+/g, " ").trim())),
    Math.max(8, width - 4),
  );
  return rows.map((row, index) => index === 0 ? row : `    ${row}`);
}
