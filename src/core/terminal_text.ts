/**
 * The one sanitizer between text tern did not write (the model's, a tool's, a file's, a
 * server's) and the terminal. A terminal obeys what it is sent: an escape sequence can erase a
 * line, move the cursor, set the window title, write the clipboard (OSC 52) or hide a link
 * (OSC 8); a carriage return can overwrite a line; a bidi override can reorder a command. So
 * every such string passes through here before it is shown, and tern's own styling is added
 * after.
 *
 * - `terminalText()` for content: removes every escape sequence (7- and 8-bit CSI, OSC, DCS,
 *   SOS, PM, APC and two-byte escapes), C0 and C1 controls except newline and tab, and bidi
 *   overrides, embeddings, isolates and marks. A carriage return becomes a line break, so it can
 *   never bring the cursor back over what was shown.
 * - `cleanDeep()` does the same to every string in a value (an event, a request).
 * - `screenLine()` is the last net at the terminal's edge, for lines that already carry tern's
 *   styling: only SGR colour sequences survive (never "conceal"), everything else goes as above,
 *   and tabs and line breaks become spaces because a screen row is one line.
 */

/**
 * A string sequence (OSC, DCS, SOS, PM, APC) up to its terminator. Its body stops at another
 * sequence's opener too: otherwise each of a run of unterminated 8-bit openers (U+0090, ...)
 * would be scanned to the end of the text, quadratic (100,000 of them took 7.5 s).
 */
const STRING_SEQUENCE =
  // deno-lint-ignore no-control-regex
  /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\x90\x98\x9d\x9e\x9f]*(?:\x07|\x1b\\|\x9c)/g;
// deno-lint-ignore no-control-regex
const CONTROL_SEQUENCE = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;
// deno-lint-ignore no-control-regex
const OTHER_ESCAPE = /\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;
/** Bidi embeddings, overrides and isolates, and the invisible direction marks. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Anything the slow path would change. */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// deno-lint-ignore no-control-regex
const UNSAFE_ON_SCREEN = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// deno-lint-ignore no-control-regex
const SGR = /^\x1b\[[0-9;:]*m$/;
// deno-lint-ignore no-control-regex
const LEFT_ESCAPE = /\x1b(?!\[)[\x20-\x2f]*[\x30-\x7e]?/g;
// deno-lint-ignore no-control-regex
const CONTROLS_BUT_ESCAPE = /[\x00-\x1a\x1c-\x1f\x7f-\x9f]/g;
// deno-lint-ignore no-control-regex
const C0 = /[\x00-\x1f\x7f]/g;
/**
 * What a fact shows as its code point: C1 controls, format characters (bidi, zero-width, soft
 * hyphen, BOM), line and paragraph separators, spaces other than the plain one, glyphs that
 * draw blank (the braille blank, private-use characters, and every default-ignorable code point:
 * Hangul fillers, variation selectors, the combining grapheme joiner, Khmer inherent vowels,
 * tags) and every unassigned code point (noncharacters such as U+FFFF included), which
 * terminals draw as nothing. Each looks like nothing or like a space, but is not what a shell
 * reads. A run of one of them is shown once with its count.
 */
const HIDDEN = String
  .raw`\x80-\x9f\p{Cf}\p{Cn}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Co}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800`;
const HIDDEN_IN_FACTS = new RegExp(`([${HIDDEN}])\\1*`, "gu");
const HIDDEN_OR_CONTROL = new RegExp(String.raw`[\x00-\x1f\x7f${HIDDEN}]`, "u");

/**
 * Whether `text` holds a character that is not what it looks like: a control (C0, DEL, C1) or
 * one of the characters `visibleText()` shows as its code point. A name (a model's, a
 * profile's) holding one would draw rows of its own or read as another name.
 */
export function hasHiddenCharacter(text: string): boolean {
  return HIDDEN_OR_CONTROL.test(text);
}

/**
 * `text` with nothing left that a terminal would obey: escape sequences, controls (newline and
 * tab kept; a carriage return, alone or before a newline, turned into one line break) and bidi
 * formatting characters removed. Printable text, emoji and right-to-left letters are kept.
 * Never throws.
 */
export function terminalText(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return stripSequences(text)
    .replace(/\r\n?/g, "\n")
    .replace(CONTROLS, "")
    .replace(BIDI, "");
}

/** `value` with every string in it (object keys too) passed through `terminalText()`. */
export function cleanDeep<T>(value: T): T {
  return clean(value, 0) as T;
}

function clean(value: unknown, depth: number): unknown {
  if (typeof value === "string") return terminalText(value);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) return value.map((item) => clean(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[terminalText(key)] = clean(item, depth + 1);
  return out;
}

/**
 * One screen row, made safe at the terminal's edge: SGR styling kept (except "conceal", which
 * hides text), every other sequence, control and bidi character removed, tabs and line breaks
 * turned into spaces. A row that kept any styling ends with a reset (`ESC[0m`), so no colour
 * (black on black, say) set in one row can reach the next row or the rows a clear paints.
 * Content should already have passed `terminalText()`; this catches any path that forgot.
 * Never throws.
 */
export function screenLine(line: string): string {
  if (!UNSAFE_ON_SCREEN.test(line)) return line;
  const safe = line
    .replace(STRING_SEQUENCE, "")
    .replace(
      CONTROL_SEQUENCE,
      (sequence) => SGR.test(sequence) && !conceals(sequence) ? sequence : "",
    )
    .replace(LEFT_ESCAPE, "")
    .replace(/\t/g, "  ")
    .replace(/\r?\n|\r/g, " ")
    .replace(CONTROLS_BUT_ESCAPE, "")
    .replace(BIDI, "");
  return !safe.includes("\x1b") || safe.endsWith(RESET) ? safe : safe + RESET;
}

/** Turns off every SGR attribute and colour. */
const RESET = "\x1b[0m";

function stripSequences(text: string): string {
  return text
    .replace(STRING_SEQUENCE, "")
    .replace(CONTROL_SEQUENCE, "")
    .replace(OTHER_ESCAPE, "");
}

/**
 * Whether an SGR sequence turns on "conceal" (8, also written `08`), which would hide the text
 * after it. The values of an extended colour (`38;5;8`, `48;2;8;8;8`) are not attributes.
 */
function conceals(sequence: string): boolean {
  const params = sequence.slice(2, -1).split(";");
  for (let i = 0; i < params.length; i++) {
    // A parameter with colon sub-parameters (`38:5:8`) is one attribute, named by its head.
    const [head, ...sub] = params[i].split(":");
    const value = Number(head || "0");
    if (value === 38 || value === 48 || value === 58) {
      if (sub.length === 0) i += params[i + 1] === "5" ? 2 : params[i + 1] === "2" ? 4 : 1;
    } else if (value === 8) {
      return true;
    }
  }
  return false;
}

/**
 * `text` with every character a terminal would obey or hide made visible instead of removed,
 * for the facts a person approves (a command, a path): controls as their control pictures
 * (`␛`, `␍`, `␇`), line breaks as `↵`, C1 controls, bidi and other invisible formatting and
 * look-alike spaces, blank glyphs and unassigned code points as `⟨U+202E⟩` (a run of one as `⟨300 × U+2800⟩`), and
 * runs of `options.spaces` (default 8) or more spaces as `⟨40 spaces⟩`. What runs is what is shown,
 * just readable. Never throws.
 */
export function visibleText(text: string, options: { spaces?: number } = {}): string {
  const spaces = new RegExp(` {${Math.max(2, options.spaces ?? 8)},}`, "g");
  return text
    .replace(spaces, (run) => `⟨${run.length} spaces⟩`)
    .replace(/\r?\n/g, (end) => end.length === 2 ? "␍↵" : "↵")
    .replace(
      C0,
      (char) => char === "\x7f" ? "␡" : String.fromCharCode(0x2400 + char.charCodeAt(0)),
    )
    .replace(HIDDEN_IN_FACTS, (run, char: string) => {
      const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
      const count = run.length / char.length;
      return count === 1 ? `⟨${code}⟩` : `⟨${count} × ${code}⟩`;
    });
}

/** A text that arrives in pieces, cleaned piece by piece (see `streamCleaner()`). */
export interface TextStreamCleaner {
  /** The clean text that can be shown now; an unfinished sequence at the end waits. */
  push(text: string): string;
  /** The clean rest, at the end of the stream. */
  flush(): string;
}

/** Longest unfinished sequence held back, in characters; longer ones are let go as text. */
const HOLD_MAX = 4_096;
const OPEN_AT_END =
  // deno-lint-ignore no-control-regex
  /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\x90\x98\x9d\x9e\x9f]*\x1b?$|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*$|\x1b[\x20-\x2f]*$|\r$/;

/**
 * `terminalText()` for a stream (the model's answer as it arrives, a command's output): a
 * sequence split across two pieces is held back until it is whole, then removed whole, so
 * neither its parts nor its payload (a link's address, a clipboard write) show up as text.
 * Never throws.
 */
export function streamCleaner(): TextStreamCleaner {
  let pending = "";
  return {
    push(text) {
      const all = pending + text;
      const from = Math.max(0, all.length - HOLD_MAX);
      const open = OPEN_AT_END.exec(all.slice(from));
      const cut = open === null ? all.length : from + open.index;
      pending = all.slice(cut);
      return terminalText(all.slice(0, cut));
    },
    flush() {
      const rest = pending;
      pending = "";
      return terminalText(rest);
    },
  };
}

const RAW_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text with what `JSON.stringify` leaves raw but a terminal would obey (DEL, C1 controls,
 * bidi formatting, line and paragraph separators) written as `\uXXXX`: the same JSON value,
 * safe to print. Those characters can only occur inside JSON strings, so nothing else changes.
 */
export function jsonForTerminal(json: string): string {
  return json.replace(
    RAW_IN_JSON,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
