/**
 * Plain command lines without the parser: words (bare, `'single'` and `"double"` quoted without
 * expansions or escapes) joined by `|`, `&&`, `||` and `;`. Most commands a model runs look like
 * this, and tree-sitter's wasm grammar costs tens of megabytes of compiled code once it is used
 * often; anything else goes to the parser. A test compares this scanner with the parser on a
 * large corpus: for every line it accepts, the result must be the parser's.
 */
import type { RawCommand, WalkState } from "./_walk.ts";
import { literalWord, type WordValue } from "./_words.ts";

/** Characters of an unquoted word part: no glob, brace, tilde, escape, expansion or operator. */
const BARE = /[A-Za-z0-9_.\/:@%+,=-]/;

/** Command names the parser reads as something other than a simple command. */
const SPECIAL_NAMES: ReadonlySet<string> = new Set([
  "if",
  "then",
  "elif",
  "else",
  "fi",
  "case",
  "esac",
  "for",
  "select",
  "while",
  "until",
  "do",
  "done",
  "in",
  "function",
  "time",
  "coproc",
  "export",
  "declare",
  "typeset",
  "local",
  "readonly",
  "unset",
  "unsetenv",
]);

const SEPARATORS = ["&&", "||", "|", ";"] as const;

interface Token {
  word: WordValue;
  /** The word as written. */
  raw: string;
  start: number;
  end: number;
}

/**
 * What the parser's walk would collect for `source` (see `walkStatement`), or undefined when
 * `source` is not a plain command line: then only the parser may judge it.
 */
export function scanPlain(source: string): WalkState | undefined {
  const commands: RawCommand[] = [];
  let words: Token[] = [];
  let i = 0;
  let lastSeparator: string | undefined;
  const close = (): boolean => {
    if (words.length === 0) return false;
    const command = plainCommand(source, words);
    if (command === undefined) return false;
    commands.push(command);
    words = [];
    return true;
  };
  while (i < source.length) {
    const ch = source[i];
    if (ch === " " || ch === "\t") {
      i++;
      continue;
    }
    const separator = SEPARATORS.find((op) => source.startsWith(op, i));
    if (separator !== undefined) {
      if (!close()) return undefined;
      lastSeparator = separator;
      i += separator.length;
      // `|&`, `;;`, `&&&`, `|||`: not plain.
      if (/[&|;]/.test(source[i] ?? "")) return undefined;
      continue;
    }
    const token = scanWord(source, i);
    if (token === undefined) return undefined;
    words.push(token);
    i = token.end;
  }
  if (words.length > 0) {
    if (!close()) return undefined;
  } else if (lastSeparator !== ";" || commands.length === 0) {
    // Nothing at all, or a line ending in `|`, `&&` or `||`.
    return undefined;
  }
  return { source, commands, opaque: [] };
}

function plainCommand(source: string, words: Token[]): RawCommand | undefined {
  const name = words[0].raw;
  if (SPECIAL_NAMES.has(name) || name.includes("=")) return undefined;
  return {
    words: words.map((token) => token.word),
    assignments: [],
    redirects: [],
    heredocs: [],
    text: source.slice(words[0].start, words.at(-1)!.end),
    depth: 0,
  };
}

/** One word starting at `start`, or undefined when it holds anything but plain parts. */
function scanWord(source: string, start: number): Token | undefined {
  let value = "";
  let i = start;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "'") {
      const end = source.indexOf("'", i + 1);
      if (end < 0) return undefined;
      const body = source.slice(i + 1, end);
      if (body.includes("\n")) return undefined;
      value += body;
      i = end + 1;
    } else if (ch === '"') {
      const end = source.indexOf('"', i + 1);
      if (end < 0) return undefined;
      const body = source.slice(i + 1, end);
      if (/[$`\\\n!]/.test(body)) return undefined;
      value += body;
      i = end + 1;
    } else if (BARE.test(ch)) {
      value += ch;
      i++;
    } else if (ch === " " || ch === "\t" || ch === "|" || ch === ";" || ch === "&") {
      break;
    } else {
      return undefined;
    }
  }
  if (i === start) return undefined;
  return { word: literalWord(value), raw: source.slice(start, i), start, end: i };
}
