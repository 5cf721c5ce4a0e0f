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

/** Scripts with letters drawn like Latin ones (`а` U+0430 is Cyrillic, `ο` U+03BF Greek). */
const LOOK_ALIKE_SCRIPTS = [
  "Cyrillic",
  "Greek",
  "Armenian",
  "Cherokee",
  "Coptic",
  "Lisu",
  "Canadian_Aboriginal",
  "Georgian",
  "Tifinagh",
  "Vai",
] as const;
const SCRIPT_TESTS = LOOK_ALIKE_SCRIPTS.map((name) =>
  [name, new RegExp(`\\p{Script=${name}}`, "u")] as const
);
const LATIN = /\p{Script=Latin}/u;
const OTHER_SCRIPT = new RegExp(
  `[${LOOK_ALIKE_SCRIPTS.map((name) => `\\p{Script=${name}}`).join("")}]`,
  "u",
);
/** Most look-alike letters a warning names; the rest are counted. */
const LOOK_ALIKES_NAMED = 4;
/** Most characters of a request's words searched for look-alikes. */
const LOOK_ALIKE_SCAN = 1_000_000;

/**
 * The characters in `texts` that read as other letters, each once, as `"а" U+0430 Cyrillic`:
 * a letter of a script drawn like Latin (Cyrillic, Greek, ...) in a word (text between
 * whitespace) that has Latin letters too (`/etc/pаsswd`, `https://gіthub.com`), and anywhere a
 * character that stands for an ASCII one in another form (fullwidth `Ｋ`, the Kelvin sign,
 * mathematical letters), which a shell, a file system or a server does not read as that
 * letter. Never throws.
 */
export function lookAlikeLetters(texts: readonly string[]): string[] {
  const found = new Map<string, string>();
  let budget = LOOK_ALIKE_SCAN;
  for (const text of texts) {
    if (budget <= 0) break;
    const part = text.slice(0, budget);
    budget -= part.length;
    // deno-lint-ignore no-control-regex
    if (/^[\x00-\x7f]*$/.test(part)) continue;
    for (const word of part.split(/\s+/)) {
      const mixed = LATIN.test(word) && OTHER_SCRIPT.test(word);
      for (const char of word) {
        if (char.charCodeAt(0) < 0x80 || found.has(char)) continue;
        const script = mixed ? SCRIPT_TESTS.find(([, test]) => test.test(char))?.[0] : undefined;
        const ascii = char.normalize("NFKC");
        const stands = /^[\x21-\x7e]+$/.test(ascii) ? `for "${ascii}"` : undefined;
        const what = script?.replace("_", " ") ?? stands;
        if (what === undefined) continue;
        const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
        found.set(char, `"${char}" U+${code} ${what}`);
      }
    }
  }
  return [...found.values()];
}

/**
 * Warnings about what a request's words do not show as they read, each one line, none when all
 * is plain: names of one object's arguments that differ only in spaces or case, letters that
 * read as others (`lookAlikeLetters()`), and an address whose host is not where it seems to be
 * (`https://github.com@evil.example/`: the host is `evil.example`).
 * Searched: the summary, and every argument's name and string value but the edit texts a diff
 * shows (code may quote any script or address). Never throws.
 */
export function requestWarnings(request: ReviewRequest): string[] {
  const texts = [request.summary];
  // Names of one object that read alike (`path`, `path `, `Path`): the person cannot tell
  // which value a tool reads.
  const alike: string[] = [];
  const walk = (value: unknown, depth: number, top: boolean) => {
    if (typeof value === "string") texts.push(value);
    if (value === null || typeof value !== "object" || depth > 32) return;
    const seen = new Map<string, string>();
    for (const [name, item] of Object.entries(value)) {
      if (top && EDIT_TEXTS.includes(name)) continue;
      texts.push(name);
      const key = name.normalize("NFKC").trim().toLowerCase();
      const other = seen.get(key);
      if (other !== undefined && alike.length < HOSTS_NAMED) {
        alike.push(`${JSON.stringify(other)} and ${JSON.stringify(name)}`);
      }
      seen.set(key, name);
      walk(item, depth + 1, false);
    }
  };
  walk(request.args, 0, true);
  const warnings: string[] = [];
  for (const pair of alike) warnings.push(`Arguments named alike: ${pair}`);
  const letters = lookAlikeLetters(texts);
  const more = letters.length - LOOK_ALIKES_NAMED;
  if (letters.length > 0) {
    warnings.push(
      `Look-alike letters, not what they seem: ${letters.slice(0, LOOK_ALIKES_NAMED).join(", ")}${
        more > 0 ? ` and ${more} more` : ""
      }`,
    );
  }
  for (const [address, host] of hiddenHosts(texts)) {
    warnings.push(`The address ${address} goes to the host "${host}"`);
  }
  return warnings.map((warning) => visibleText(warning));
}

/** Most addresses with a hidden host named. */
const HOSTS_NAMED = 3;
/** Longest address quoted in a warning, in characters. */
const ADDRESS_CHARS = 100;

/**
 * The addresses in `texts` with something before their host that reads as one (user info:
 * `https://github.com@evil.example/`, `https://evil.example\@github.com`), each with the host
 * a WHATWG URL parser reaches (`?` when none can be read), the address quoted and cut short.
 */
function hiddenHosts(texts: readonly string[]): [string, string][] {
  const found = new Map<string, string>();
  let budget = LOOK_ALIKE_SCAN;
  for (const text of texts) {
    if (budget <= 0 || found.size >= HOSTS_NAMED) break;
    const part = text.slice(0, budget);
    budget -= part.length;
    if (!part.includes("@")) continue;
    for (const [address] of part.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]+/gi)) {
      const authority = /^[^:]+:\/\/([^/?#]*)/.exec(address)?.[1] ?? "";
      if (!authority.includes("@") || found.size >= HOSTS_NAMED) continue;
      let host = "?";
      try {
        host = new URL(address).hostname || "?";
      } catch {
        // Not one address a parser reads: the person is told no host can be read.
      }
      const quoted = address.length <= ADDRESS_CHARS
        ? address
        : `${address.slice(0, ADDRESS_CHARS - 1)}…`;
      found.set(`"${quoted}"`, host);
    }
  }
  return [...found];
}

/**
 * The warning that unified `diff` changes lines in what a diff view does not draw, or undefined:
 * an added line that differs from a removed one only in its line end (`\r`: CRLF) or trailing
 * spaces and tabs shows as the same line removed and added. Never throws.
 */
export function unseenDiffWarning(diff: string): string | undefined {
  const lines = diff.split("\n");
  const removed = new Map<string, Set<string>>();
  const added: string[] = [];
  let inHunk = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("@@")) inHunk = true;
    else if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) inHunk = false;
    else if (inHunk && line.startsWith("-")) {
      const body = line.slice(1);
      const key = drawn(body);
      removed.set(key, (removed.get(key) ?? new Set()).add(body));
    } else if (inHunk && line.startsWith("+")) added.push(line.slice(1));
  }
  const unseen = added.filter((body) => removed.get(drawn(body))?.has(body) === false).length;
  if (unseen === 0) return undefined;
  return `${unseen} changed ${
    unseen === 1 ? "line differs" : "lines differ"
  } only in line ends (CRLF) or ` +
    "trailing spaces, which the diff does not draw";
}

/** A diff line as a view draws it: no line end, no trailing blanks. */
function drawn(line: string): string {
  return line.replace(/[ \t\r]+$/, "");
}
