/** Where streamed Markdown can be cut so the finished part is rendered once. */

/** An opening or closing fence line, at any indentation (fences inside list items count). */
const FENCE = /^([ \t]*)(`{3,}|~{3,})(.*)$/;

/**
 * Splits streamed Markdown into `stable` (whole blocks that later text cannot change) and `rest`
 * (the blocks still being written). `stable + rest === text`. The cut goes
 * - after a closing fence line (with its newline) of an unindented fenced code block, or
 * - after a blank line outside any open fence, once the next line has started with a character
 *   other than a space or tab — an indented line could still belong to the list item above.
 *
 * Rendered separately, the two parts give the same blocks as the whole, so a caller writes the
 * stable lines to scrollback once and keeps only `rest` live (one blank line between them). A
 * list or a table that goes on after the cut is rendered as a second list or table: an ordered
 * list keeps its numbering, a loose list looks the same, and a table cannot span a blank line.
 * Reference-style link definitions that come after the cut are not seen by the stable part.
 * Never throws; linear in the length of `text`.
 */
export function splitStable(text: string): { stable: string; rest: string } {
  let fence: { char: string; length: number } | undefined;
  let cut = 0;
  let blankEnd = -1;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    if (blankEnd >= 0 && fence === undefined) {
      const first = text[start];
      if (first !== " " && first !== "\t" && first !== "\n") {
        cut = blankEnd;
        blankEnd = -1;
      } else if (first !== "\n") blankEnd = -1;
    }
    if (newline === -1) break; // an unfinished line decides nothing about itself
    const line = text.slice(start, newline);
    const next = newline + 1;
    const match = FENCE.exec(line);
    if (fence) {
      if (match && closes(match, fence)) {
        fence = undefined;
        if (match[1] === "") cut = next;
      }
    } else if (match && !(match[2][0] === "`" && match[3].includes("`"))) {
      fence = { char: match[2][0], length: match[2].length };
      blankEnd = -1;
    } else if (line.trim() === "") blankEnd = next;
    start = next;
  }
  return { stable: text.slice(0, cut), rest: text.slice(cut) };
}

function closes(match: RegExpExecArray, fence: { char: string; length: number }): boolean {
  return match[2][0] === fence.char && match[2].length >= fence.length && match[3].trim() === "";
}
