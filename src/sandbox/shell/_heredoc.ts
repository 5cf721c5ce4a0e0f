/**
 * Where bash starts and ends a here-doc's body. tree-sitter's grammar does not always agree with
 * bash: it reads `<<E"O"F` as ending at a line `E"O"F` where bash ends at `EOF`, and ends a body
 * at ` EOF` or `EOF\r`, which bash does not. A command after such a line runs in bash but is body
 * text to the parser, or the other way round, so what runs could hide from the rules and the
 * classifier. The parser's analysis is kept only when every here-doc ends where bash ends it
 * (`parse.ts`), and the plain scanner reads here-docs with these same functions (`_plain.ts`).
 * Only the spellings models write are read: anything else is refused, never guessed.
 */

/** A here-doc's delimiter as bash compares it: `'EOF'`, `"EOF"`, `\EOF` and `E"O"F` are `EOF`. */
export interface HeredocDelimiter {
  word: string;
  /** Any part was quoted: bash then expands nothing in the body and joins no lines. */
  quoted: boolean;
}

/** The delimiter line bash stops at: `[lineStart, lineEnd)`, its newline left out. */
export interface HeredocEnd {
  lineStart: number;
  /** Where the delimiter starts: after the tabs `<<-` drops. */
  wordStart: number;
  lineEnd: number;
}

const DELIMITER_CHAR = /[A-Za-z0-9_.+-]/;
const DELIMITER_PART = /^[A-Za-z0-9_.+-]*$/;

/**
 * The delimiter a here-doc's start word (`EOF`, `'EOF'`, `"EOF"`, `\EOF`, `E"O"F`) stands for,
 * or undefined when it holds anything but letters, digits and `_.+-` in those quotes.
 */
export function readDelimiter(text: string): HeredocDelimiter | undefined {
  let word = "";
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return undefined;
      const part = text.slice(i + 1, end);
      if (!DELIMITER_PART.test(part)) return undefined;
      word += part;
      quoted = true;
      i = end + 1;
    } else if (ch === "\\") {
      const next = text[i + 1];
      if (next === undefined || !DELIMITER_CHAR.test(next)) return undefined;
      word += next;
      quoted = true;
      i += 2;
    } else if (DELIMITER_CHAR.test(ch)) {
      word += ch;
      i++;
    } else {
      return undefined;
    }
  }
  return word === "" ? undefined : { word, quoted };
}

/**
 * The index of the newline that ends the line a here-doc starts on, from `from` (just after the
 * start word), when bash too reads that newline as the line's end: nothing on the rest of the
 * line may carry on past it (an open quote, a backslash, a substitution, another here-doc).
 * Undefined otherwise, or when no newline follows (then the here-doc has no body).
 */
export function startLineEnd(source: string, from: number): number | undefined {
  let i = from;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "\n") return i;
    if (ch === "'" || ch === '"') {
      const end = source.indexOf(ch, i + 1);
      if (end < 0) return undefined;
      const body = source.slice(i + 1, end);
      // In double quotes `$(…)` and `${…}` may hold quotes of their own: not read here.
      if (body.includes("\n") || (ch === '"' && /[\\`]|\$[({]/.test(body))) return undefined;
      i = end + 1;
      continue;
    }
    if ("\\`(){}".includes(ch)) return undefined;
    if (ch === "$" && /['"]/.test(source[i + 1] ?? "")) return undefined;
    if (ch === "<" && source[i + 1] === "<") return undefined;
    if (ch === "#" && /[ \t]/.test(source[i - 1] ?? " ")) {
      const newline = source.indexOf("\n", i);
      return newline < 0 ? undefined : newline;
    }
    i++;
  }
  return undefined;
}

/**
 * The line bash ends a here-doc at, its body starting at `bodyStart`: the first line that is the
 * delimiter, after `<<-` drops its leading tabs. In a body whose delimiter is not quoted, a line
 * ending in an odd number of backslashes goes on into the next before the comparison. Undefined
 * when no line is: bash then reads the body to the end of the input.
 */
export function heredocEnd(
  source: string,
  bodyStart: number,
  delimiter: HeredocDelimiter,
  stripTabs: boolean,
): HeredocEnd | undefined {
  let lineStart = bodyStart;
  while (lineStart <= source.length) {
    let logical = "";
    let at = lineStart;
    let lineEnd: number;
    for (;;) {
      const newline = source.indexOf("\n", at);
      lineEnd = newline < 0 ? source.length : newline;
      const piece = source.slice(at, lineEnd);
      if (!delimiter.quoted && newline >= 0 && /(?:^|[^\\])(?:\\\\)*\\$/.test(piece)) {
        logical += piece.slice(0, -1);
        at = newline + 1;
        continue;
      }
      logical += piece;
      break;
    }
    const text = stripTabs ? logical.replace(/^\t+/, "") : logical;
    if (text === delimiter.word) {
      return { lineStart, wordStart: lineStart + logical.length - text.length, lineEnd };
    }
    if (lineEnd >= source.length) return undefined;
    lineStart = lineEnd + 1;
  }
  return undefined;
}
