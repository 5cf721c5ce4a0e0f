/**
 * Assistant Markdown to terminal lines: marked's lexer, our own rendering. Blocks are separated
 * by one blank line and every line fits the width. Unfinished Markdown (a stream cut anywhere)
 * renders as far as it goes: an unclosed fence is a code block to the end.
 *
 * marked builds its regexes at import (`bench/results/code_costs.md`), so it is not imported
 * with this module:
 * `loadMarkdown()` loads it, and the interactive session has it loaded before any answer or
 * transcript is drawn. Until then text renders as it is, wrapped.
 */
import type { Lexer, MarkedToken, Token, Tokens } from "marked";
import { clipToWidth } from "./clip.ts";
import { cleanText } from "./format.ts";
import { highlightCode } from "./highlight.ts";
import { plainText, renderInline } from "./markdown_inline.ts";
import { renderTable } from "./markdown_table.ts";
import type { Theme } from "./theme.ts";
import { breakText, visibleWidth, wrapText, wrapTrimmed } from "./width.ts";

export { highlightCode, highlighterReady, loadHighlighter } from "./highlight.ts";
export { splitStable } from "./markdown_stream.ts";

/** Spaces before each code line. */
const CODE_INDENT = 2;

/**
 * Emphasis delimiters (`*`, `_`) one block may hold before they are shown as written: marked's
 * time for emphasis grows with the square of the delimiters in one paragraph (15,000 characters
 * of `*_a` took 3 s, 60,000 took 33 s; 1,000 delimiters about 40 ms), on the UI's thread.
 */
const MAX_DELIMITERS = 1_000;

const FENCE_LINE = /^[ \t]*(`{3,}|~{3,})/;

let lexer: typeof Lexer | undefined;
let loading: Promise<void> | undefined;

/** Loads marked (once; later calls return the same promise). */
export function loadMarkdown(): Promise<void> {
  return loading ??= import("marked").then((marked) => {
    lexer = marked.Lexer;
  });
}

/**
 * The model's `text` (Markdown, possibly unfinished) as styled lines, each at most `width` cells
 * (a width below 1 counts as 1), never a row that starts with one of tern's own marks
 * ({@linkcode clearOfMarks}): every front end draws the model's text through this function, so
 * none can forget that. Headings keep their `#` marks (dim) so the structure survives without
 * colour; paragraphs are re-wrapped (a soft line break is a space); code blocks are not
 * word-wrapped: long code lines break at the width and continue on the next line, indented
 * like the code. Escape sequences and control characters in `text` are removed and tabs become
 * two spaces (`cleanText`), and again in every token's text after marked decoded its character
 * references (`&#27;` is ESC then). Never throws.
 */
export function renderMarkdown(text: string, width: number, theme: Theme): string[] {
  return clearOfMarks((cells) => renderUnguarded(text, cells, theme), width);
}

/** `renderMarkdown` without `clearOfMarks`: never for the screen as it is. */
function renderUnguarded(text: string, width: number, theme: Theme): string[] {
  const cells = Math.max(1, Math.floor(width));
  const clean = tameNesting(tameEmphasis(cleanText(text)));
  let lines: string[];
  try {
    if (!lexer) throw new Error("marked is not loaded yet");
    lines = renderBlocks(lexer.lex(clean), cells, theme, false);
  } catch {
    lines = preformatted(clean, cells); // marked gave up: show the text as it is
  }
  for (let i = 0; i < lines.length; i++) {
    if (visibleWidth(lines[i]) > cells) lines[i] = clipToWidth(lines[i], cells);
  }
  return lines;
}

/**
 * `text` with each `*` and `_` escaped (outside code spans) in every block that holds more than
 * {@linkcode MAX_DELIMITERS} of them, so such a block shows them as written instead of taking
 * seconds to read as emphasis. A block is the lines between blank lines; fenced code is left as
 * it is.
 */
function tameEmphasis(text: string): string {
  if (countDelimiters(text) <= MAX_DELIMITERS) return text;
  const lines = text.split("\n");
  let block: number[] = [];
  let fence: string | undefined;
  const close = () => {
    if (block.reduce((sum, i) => sum + countDelimiters(lines[i]), 0) > MAX_DELIMITERS) {
      for (const i of block) lines[i] = escapeDelimiters(lines[i]);
    }
    block = [];
  };
  for (const [i, line] of lines.entries()) {
    const marker = FENCE_LINE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = undefined;
      }
    } else if (marker !== undefined) {
      close();
      fence = marker;
    } else if (line.trim() === "") close();
    else block.push(i);
  }
  close();
  return lines.join("\n");
}

/**
 * Blockquotes and lists one line may open, and spaces it may be indented by, before the rest is
 * shown as written: marked's time grows with the square of the depth (1,000 lines of deeper
 * blockquotes took 2 s to lex, of deeper lists 13 s), on the UI's thread.
 */
const MAX_DEPTH = 8;
const MAX_INDENT = 4 * MAX_DEPTH;

/** A line's blockquote and list markers and the spaces before them. */
const CONTAINERS = /^(?: *(?:>|[-+*](?= |$)|\d{1,9}[.)](?= |$)))+/;
const CONTAINER = /( *)(>|[-+*]|\d{1,9}[.)])/g;

/**
 * `text` with every line outside fenced code opening at most {@linkcode MAX_DEPTH} blockquotes
 * and lists (the next marker escaped, so it shows as written) and indented by at most
 * {@linkcode MAX_INDENT} spaces. Deeper nesting is drawn at that depth.
 */
function tameNesting(text: string): string {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = FENCE_LINE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = undefined;
      }
      return line;
    }
    if (marker !== undefined) fence = marker;
    return tameLine(line);
  }).join("\n");
}

function tameLine(line: string): string {
  const indent = line.length - line.trimStart().length;
  if (indent > MAX_INDENT) line = line.slice(indent - MAX_INDENT);
  const prefix = CONTAINERS.exec(line)?.[0];
  if (prefix === undefined || prefix.length <= MAX_DEPTH) return line;
  let kept = 0;
  let depth = 0;
  let spaces = 0;
  for (const match of prefix.matchAll(CONTAINER)) {
    spaces += match[1].length;
    if (depth === MAX_DEPTH || spaces > MAX_INDENT) {
      const rest = line.slice(kept).trimStart();
      // The next marker escaped: a backslash before `>`, `-`, `+`, `*`, or a number's `.`/`)`.
      const at = /^\d/.test(rest) ? rest.search(/[.)]/) : 0;
      return `${line.slice(0, kept)} ${rest.slice(0, at)}\\${rest.slice(at)}`;
    }
    depth++;
    kept = match.index + match[0].length;
  }
  return line;
}

function countDelimiters(text: string): number {
  let count = 0;
  for (let i = text.indexOf("*"); i >= 0; i = text.indexOf("*", i + 1)) count++;
  for (let i = text.indexOf("_"); i >= 0; i = text.indexOf("_", i + 1)) count++;
  return count;
}

/** `line` with `*` and `_` escaped, except inside code spans (between backticks). */
function escapeDelimiters(line: string): string {
  return line.split("`").map((part, i) => i % 2 === 1 ? part : part.replace(/[*_]/g, "\\$&"))
    .join("`");
}

/** Block tokens to lines; `tight` (a tight list item's content) drops the blank separators. */
function renderBlocks(tokens: readonly Token[], width: number, theme: Theme, tight: boolean) {
  const lines: string[] = [];
  for (const token of tokens) {
    const block = renderBlock(token as MarkedToken, width, theme);
    if (block.length === 0) continue;
    if (lines.length > 0 && !tight) lines.push("");
    lines.push(...block);
  }
  return lines;
}

function renderBlock(token: MarkedToken, width: number, theme: Theme): string[] {
  switch (token.type) {
    case "space":
    case "def":
    case "checkbox":
      return [];
    case "heading":
      return renderHeading(token, width, theme);
    case "paragraph":
      return wrapWords(renderInline(token.tokens, theme), width);
    case "text":
      return wrapWords(
        token.tokens ? renderInline(token.tokens, theme) : plainText(token.text),
        width,
      );
    case "list":
      return renderList(token, width, theme);
    case "blockquote":
      return renderBlocks(token.tokens, Math.max(1, width - 2), theme, false).map((line) =>
        line === "" ? theme.dim("│") : theme.dim("│ ") + line
      );
    case "hr":
      // Indented: a row that starts with `─` is the turn footer's (`startsWithMark`).
      return [theme.dim(`  ${"─".repeat(Math.max(1, width - 2))}`)];
    case "table":
      return renderTable(token, width, theme);
    case "code":
      return renderCode(token, width, theme);
    default:
      return preformatted("raw" in token ? cleanText(token.raw).replace(/\n+$/, "") : "", width);
  }
}

function renderHeading(token: Tokens.Heading, width: number, theme: Theme): string[] {
  const paint = token.depth === 1 ? theme.magenta : token.depth === 2 ? theme.blue : undefined;
  const text = renderInline(token.tokens, theme, { bold: true, paint });
  return wrapWords(theme.dim(`${"#".repeat(token.depth)} `) + theme.bold(text), width);
}

function renderList(list: Tokens.List, width: number, theme: Theme): string[] {
  const start = typeof list.start === "number" ? list.start : 1;
  const last = String(start + list.items.length - 1).length;
  const lines: string[] = [];
  list.items.forEach((item, index) => {
    let marker = list.ordered ? `${String(start + index).padStart(last)}.` : "-";
    if (item.task) marker += item.checked ? " [x]" : " [ ]";
    const indent = marker.length + 1;
    const body = renderBlocks(item.tokens, Math.max(1, width - indent), theme, !item.loose);
    if (index > 0 && list.loose) lines.push("");
    lines.push(`${marker} ${body[0] ?? ""}`.trimEnd());
    for (const line of body.slice(1)) lines.push(line === "" ? "" : " ".repeat(indent) + line);
  });
  return lines;
}

function renderCode(token: Tokens.Code, width: number, theme: Theme): string[] {
  // marked decodes character references in the info string too.
  const language = cleanText(token.lang ?? "").trim().split(/\s+/)[0] || undefined;
  const code = cleanText(token.text);
  const room = Math.max(1, width - CODE_INDENT);
  const pad = " ".repeat(CODE_INDENT);
  const lines = language ? [theme.dim(language)] : [];
  if (code === "") return lines;
  for (const line of highlightCode(code, language, theme)) {
    if (line === "") lines.push("");
    else if (visibleWidth(line) <= room) lines.push(pad + line);
    else {
      for (const piece of breakText(line, room)) lines.push(pad + piece);
    }
  }
  return lines;
}

/** Styled inline text wrapped at spaces (hard inside longer words), lines trimmed. */
function wrapWords(text: string, width: number): string[] {
  if (
    !text.includes("\n") && !text.includes("\x1b") && text.length <= width && text.trim() === text
  ) {
    if (visibleWidth(text) <= width) return [text];
  }
  return wrapTrimmed(text, width);
}

/** Raw text (HTML blocks, unknown tokens) line by line, indentation kept. */
function preformatted(text: string, width: number): string[] {
  if (text === "") return [];
  return text.split("\n").flatMap((line) => wrapText(line, width));
}

/**
 * The marks tern draws at the start of its own rows, and characters that look like them: the
 * person's `›` and `⏎`, a notice's `•`, `!` and `✗`, a tool line's `✓`, `⊘` and `■`, the
 * thinking line's `✻`, a replayed tool call's `↳`, a retry's `↻`, a model switch's `↪`, a
 * compaction's `⇣`, the turn footer's `─`, a running call's spinner (`⠋`: every braille pattern
 * looks like one of its frames) and an unexpected permission request's `?` (and `❯`, `∙`, `●`,
 * `✔`, `✘`, `⏺`, `—` and the like). Rows that tern draws itself start with one of these or with
 * `tern:`.
 */
export const TERN_MARKS = "›❯⏎↵•∙●◦⦁!✗✘✕✖❌✓✔✅⊘⦸■▪◼✻✳⏺↳↪↩⤷➥⮑↻↺⟳⥁⇣⇓↓⬇⤓─━—―‒–┄┈╌" +
  // Characters drawn like those: `˃ᐳ` as `›`, `ǃ！` as `!`, `√` as `✓`, `×` as `✗`, `·` as `•`.
  "˃ᐳ❭❱⟩〉﹥＞»ǃ！❗❕‼√☑🗸×╳⨯🗴🗶·⋅・‧⸱⚫⚬⬤∅⌀🛇◾⬛▮⎯⸺⸻✱✲✶✷✸✹✺✼✽❉❊❋⁎∗＊⭮⟲⥀🔄⇩↧↲⤶⮐⮡" +
  "?？❓❔⁇⸮⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/**
 * Styles and the characters that draw nothing (zero-width and format characters, combining
 * marks, tags, variation selectors, private-use and unassigned code points, the blank braille
 * pattern): `⠀✓ bash` draws as a tool line one cell in.
 */
const DRAWS_NOTHING =
  // deno-lint-ignore no-control-regex
  /\x1b\[[0-9;:]*m|[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\p{Co}\p{Cn}\u2800]/gu;
const LEADING_NOTHING = new RegExp(`^(?:${DRAWS_NOTHING.source})+`, "u");

/** A row's first drawn character that reads as a mark: one of the marks, or any braille dots. */
const MARK = new RegExp(`^[${TERN_MARKS}\u2801-\u28ff]`, "u");
const NAME = /^tern\s*:/i;

/**
 * Whether `line` starts with one of {@linkcode TERN_MARKS} or with `tern:` (as tern's own
 * messages do), its styles and the characters that draw nothing before and inside it ignored.
 * The model's text never starts a row so: it could draw a message the person never sent, a tool
 * line that never ran or a notice tern never wrote.
 */
export function startsWithMark(line: string): boolean {
  const rest = line.replace(LEADING_NOTHING, "");
  if (MARK.test(rest)) return true;
  return (rest[0] === "t" || rest[0] === "T") && NAME.test(rest.replace(DRAWS_NOTHING, ""));
}

/**
 * The model's text (the transcript's, `tern run`'s answer) rendered by `render` at `width`;
 * when a row would start with one of tern's marks, rendered two cells narrower and such rows
 * indented by two spaces, so that only tern's own rows start with its marks.
 */
export function clearOfMarks(render: (width: number) => string[], width: number): string[] {
  const lines = render(width);
  if (!lines.some(startsWithMark)) return lines;
  return render(Math.max(1, width - 2)).map((line) => startsWithMark(line) ? `  ${line}` : line);
}
