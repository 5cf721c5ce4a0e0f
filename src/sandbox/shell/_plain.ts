/**
 * Plain command lines without the parser: words (bare, `'single'` and `"double"` quoted, with no
 * expansion but `$name` and `${name}` and no escapes, and no glob but `*` and `?`) joined by `|`,
 * `&&`, `||`, `;` and line ends, each command's words
 * optionally followed by redirects to or from plain words (`> out.txt`, `2>&1`, `< in`, `&> log`)
 * and by one here-doc that ends its line (`cat > f <<'EOF'`, its body read as bash reads it, see
 * `_heredoc.ts`). Most commands a model runs look like this, and tree-sitter's runtime and
 * grammar take about 20 MB and 40 ms to load the first time a command needs them; anything else
 * goes to the parser. A test compares this scanner with the parser on a large corpus: for every
 * line it accepts, the result must be the parser's.
 */
import { type HeredocDelimiter, heredocEnd, readDelimiter } from "./_heredoc.ts";
import type { RawCommand, Redirect, WalkState } from "./_walk.ts";
import { hasPattern, literalWord, type WordValue } from "./_words.ts";

/**
 * Characters of an unquoted word part: no brace, tilde, escape, expansion or operator, and of
 * globs only `*` and `?`.
 */
const BARE = /[A-Za-z0-9_.\/:@%+,=*?-]/;

/** A variable's expansion the plain path reads: `$name` or `${name}`, nothing more. */
const EXPANSION = /^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})/;

/** A `$` in double quotes that starts anything but `$name` or `${name}`. */
const OTHER_EXPANSION = /\$(?![A-Za-z_]|\{[A-Za-z_][A-Za-z0-9_]*\})/;

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
 * A redirect of a file descriptor to or from a plain word: `>`, `>>`, `<`, with a descriptor
 * number before (`2>`), `>&` / `N>&` (`2>&1`), `&>` and `&>>`. Here-strings and the rest are the
 * parser's; here-docs are read apart (`HEREDOC`).
 */
const REDIRECT = /^(?:\d*(?:>>|>&|>|<)|&>>?)/;

/** A here-doc's operator and its start word (`<<'EOF'`, `<<- EOF`); not `<<<`. */
const HEREDOC = /^(<<-?)[ \t]*([^ \t\n;&|<>()]+)/;

/** A here-doc's start word quoted whole or not at all: `EOF`, `'EOF'`, `"EOF"`, `\EOF`. */
const WHOLE_DELIMITER = /^(?:\\?[\w.+-]+|'[\w.+-]+'|"[\w.+-]+")$/;

/**
 * What the parser's walk would collect for `source` (see `walkStatement`), or undefined when
 * `source` is not a plain command line: then only the parser may judge it.
 */
export function scanPlain(source: string): WalkState | undefined {
  // The parser refuses carriage returns (see `parse.ts`).
  if (source.includes("\r")) return undefined;
  const commands: RawCommand[] = [];
  let words: Token[] = [];
  let redirects: Redirect[] = [];
  let heredocs: string[] = [];
  /** A here-doc started on this line: its body starts on the next. */
  let heredoc: { delimiter: HeredocDelimiter; stripTabs: boolean } | undefined;
  let textEnd = 0;
  let i = 0;
  let lastSeparator: string | undefined;
  const close = (): boolean => {
    if (words.length === 0) return false;
    // After `a &&`, `a ||` or `a |` the parser hangs a redirect on the whole chain, and the
    // command's text is its words alone (the walk gives the redirect to the last command).
    const chained = lastSeparator !== undefined && lastSeparator !== ";";
    const end = chained && redirects.length > 0 ? words.at(-1)!.end : textEnd;
    const command = plainCommand(source, words, redirects, end);
    if (command === undefined) return false;
    command.heredocs = heredocs;
    commands.push(command);
    words = [];
    redirects = [];
    heredocs = [];
    return true;
  };
  while (i < source.length) {
    const ch = source[i];
    if (ch === " " || ch === "\t") {
      i++;
      continue;
    }
    if (ch === "\n") {
      i++;
      if (heredoc !== undefined) {
        // The body, up to the line bash ends it at; then the script goes on after that line.
        const end = heredocEnd(source, i, heredoc.delimiter, heredoc.stripTabs);
        if (end === undefined) return undefined;
        const body = source.slice(i, end.lineStart);
        // Unquoted, bash expands `$x`, `$( )` and backslashes in it: the parser's.
        if (!heredoc.delimiter.quoted && /[$`\\]/.test(body)) return undefined;
        // tree-sitter ends a body early at a line that starts with the delimiter after blanks
        // (` EOF`) or fails at one that goes on after it (`EOFX`): the parser's, to stay equal.
        const word = heredoc.delimiter.word;
        if (body.split("\n").some((line) => line.trimStart().startsWith(word))) return undefined;
        heredocs.push(body);
        heredoc = undefined;
        i = end.lineEnd + 1;
      }
      if (words.length > 0) {
        if (!close()) return undefined;
      } else if (lastSeparator !== undefined && lastSeparator !== ";") {
        // `a &&` and the next line: the parser's.
        return undefined;
      }
      lastSeparator = ";";
      continue;
    }
    const separator = SEPARATORS.find((op) => source.startsWith(op, i));
    if (separator !== undefined) {
      // A here-doc ends its line here (`cat <<EOF | grep x` is the parser's).
      if (heredoc !== undefined) return undefined;
      if (!close()) return undefined;
      lastSeparator = separator;
      i += separator.length;
      // `|&`, `;;`, `&&&`, `|||`: not plain.
      if (/[&|;]/.test(source[i] ?? "")) return undefined;
      continue;
    }
    const start = source.startsWith("<<", i) && !source.startsWith("<<<", i)
      ? HEREDOC.exec(source.slice(i, i + 64))
      : null;
    if (start) {
      // One here-doc, after a command's words and a blank (`a<<EOF` is the parser's).
      if (heredoc !== undefined || words.length === 0 || !/[ \t]/.test(source[i - 1])) {
        return undefined;
      }
      // tree-sitter drops a `-` word before a here-doc (`python3 - <<EOF`), like before `2>`.
      if (words.at(-1)!.raw === "-") return undefined;
      // Only the spellings tree-sitter ends where bash does (not `E"O"F`, see `_heredoc.ts`).
      const delimiter = WHOLE_DELIMITER.test(start[2]) ? readDelimiter(start[2]) : undefined;
      if (delimiter === undefined) return undefined;
      heredoc = { delimiter, stripTabs: start[1] === "<<-" };
      redirects.push({ op: start[1], target: delimiter.word });
      textEnd = i = i + start[0].length;
      continue;
    }
    const redirect = REDIRECT.exec(source.slice(i, i + 8))?.[0];
    if (redirect !== undefined) {
      // Only after a command's words, each after a blank (`a2>f` and `>f cmd` are the parser's).
      if (words.length === 0 || !/[ \t]/.test(source[i - 1])) return undefined;
      // tree-sitter drops a `-` word before `2>` (`cat - 2>&1`): the parser's, to stay equal.
      if (/^\d/.test(redirect) && words.at(-1)!.raw === "-") return undefined;
      // Nor does it keep a descriptor that starts with 0 (`0<f` reads as `<f`).
      if (redirect.startsWith("0")) return undefined;
      let at = i + redirect.length;
      while (source[at] === " " || source[at] === "\t") at++;
      const target = scanWord(source, at);
      if (target === undefined) return undefined;
      // `>&-` closes, `>&file` is `&>`: only a descriptor number here.
      if (redirect.endsWith(">&") && !/^\d+$/.test(target.raw)) return undefined;
      redirects.push({ op: redirect, target: target.word.value });
      textEnd = i = target.end;
      continue;
    }
    // Words end a command's redirects: `cmd >f arg` is the parser's.
    if (redirects.length > 0) return undefined;
    const token = scanWord(source, i);
    if (token === undefined) return undefined;
    words.push(token);
    textEnd = i = token.end;
  }
  // A here-doc with no line after its start has no body.
  if (heredoc !== undefined) return undefined;
  if (words.length > 0) {
    if (!close()) return undefined;
  } else if (lastSeparator !== ";" || commands.length === 0) {
    // Nothing at all, or a line ending in `|`, `&&` or `||`.
    return undefined;
  }
  return { source, commands, opaque: [] };
}

function plainCommand(
  source: string,
  words: Token[],
  redirects: Redirect[],
  end: number,
): RawCommand | undefined {
  const name = words[0].raw;
  // tree-sitter cannot parse a command named `a@b` or `a%b`: the parser's too, to stay equal.
  if (SPECIAL_NAMES.has(name) || /[=@%]/.test(name)) return undefined;
  return {
    words: words.map((token) => token.word),
    assignments: [],
    redirects,
    heredocs: [],
    text: source.slice(words[0].start, end),
    depth: 0,
  };
}

/**
 * One word starting at `start`, or undefined when it holds anything but plain parts. A word with
 * an expansion is known only when it runs: its value is its source text, as the parser gives it.
 */
function scanWord(source: string, start: number): Token | undefined {
  let value = "";
  /** The unquoted parts, where a glob character is one. */
  let bare = "";
  let dynamic = false;
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
      if (/[`\\\n!]/.test(body) || OTHER_EXPANSION.test(body)) return undefined;
      dynamic ||= body.includes("$");
      value += body;
      i = end + 1;
    } else if (ch === "$") {
      const expansion = EXPANSION.exec(source.slice(i, i + 256))?.[0];
      if (expansion === undefined) return undefined;
      dynamic = true;
      i += expansion.length;
    } else if (BARE.test(ch)) {
      value += ch;
      bare += ch;
      i++;
    } else if (
      ch === " " || ch === "\t" || ch === "\n" || ch === "|" || ch === ";" || ch === "&" ||
      ch === ">" || ch === "<"
    ) {
      break;
    } else {
      return undefined;
    }
  }
  if (i === start) return undefined;
  const raw = source.slice(start, i);
  const word = dynamic
    ? { value: raw, dynamic: true, pattern: hasPattern(bare) }
    : { ...literalWord(value), pattern: hasPattern(bare) };
  return { word, raw, start, end: i };
}
