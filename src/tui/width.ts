/**
 * Terminal cell arithmetic on styled text: how wide a string is on screen (East Asian wide
 * characters and emoji take two cells, escape sequences none), wrapping to a width and cutting
 * to a width without breaking escape sequences.
 *
 * The width libraries (string-width, wrap-ansi, slice-ansi) cost tens of milliseconds at import
 * (ICU start, Unicode regexes), so they are not imported with this module: `loadWidth()` loads
 * them (the interactive session calls it right after its first frame). Until they are in, every
 * function here measures with an upper bound (width_fallback.ts): exact for ASCII and CJK, wider
 * for emoji sequences and combining marks. A line is then never wider than asked, only wrapped
 * or cut early; `widthEpoch()` changes once the libraries are in, for caches and a redraw.
 *
 * The libraries measure a grapheme cluster as its first character, but many terminals (tmux,
 * xterm, VTE) draw it code point by code point: a Thai SARA AM run, a Devanagari conjunct, Hangul
 * jamo, an emoji sequence or a lone surrogate then takes more cells than counted, and a row
 * counted as fitting wraps on screen. Text holding such characters (`UNCERTAIN`) is measured
 * with the upper bound even once the libraries are in, so a row of the live region (a command
 * in the permission dialog) is never wider than its count.
 */
import { fallbackSlice, fallbackWidth, fallbackWrap } from "./width_fallback.ts";

interface WidthLibraries {
  stringWidth: (text: string) => number;
  wrapAnsi: (
    text: string,
    columns: number,
    options: { hard: boolean; trim: boolean; wordWrap: boolean },
  ) => string;
  sliceAnsi: (text: string, start: number, end?: number) => string;
}

const NOT_PLAIN = /[^\x20-\x7e]/;
/**
 * Characters that join a grapheme cluster yet may take cells of their own on a terminal, or
 * whose width terminals disagree on: combining marks (but variation selectors), format
 * characters (joiners, prepended number signs, tags), lone surrogates, Hangul jamo, Thai and Lao
 * AM, halfwidth sound marks, regional indicators and emoji modifiers; characters the libraries
 * count zero cells that terminals draw (`Default_Ignorable_Code_Point`: the Hangul fillers U+3164
 * and U+FFA0 are blank and one or two cells wide); and the East Asian "ambiguous" characters
 * the libraries count one cell that the upper bound counts two (circled numbers, U+3248 to
 * U+324F, card suits, private use), which many terminals draw two cells wide.
 */
const UNCERTAIN = new RegExp(
  "(?![\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}])[\\p{M}\\p{Cf}\\p{Cs}\\p{Default_Ignorable_Code_Point}" +
    "\\u0e33\\u0eb3\\u1100-\\u11ff\\ua960-\\ua97f\\ud7b0-\\ud7ff\\uff9e\\uff9f\\u{1f1e6}-\\u{1f1ff}" +
    "\\u{1f3fb}-\\u{1f3ff}" +
    // East Asian ambiguous, outside the ranges width_fallback.ts counts one cell.
    "\\u2153-\\u2154\\u215b-\\u215e\\u2160-\\u216b\\u2170-\\u2179\\u2189\\u2460-\\u24e9" +
    "\\u24eb-\\u24ff\\u2605-\\u2606\\u2609\\u260e-\\u260f\\u261c\\u261e\\u2640\\u2642" +
    "\\u2660-\\u2661\\u2663-\\u2665\\u2667-\\u266a\\u266c-\\u266d\\u266f\\u269e-\\u269f" +
    "\\u26bf\\u26c6-\\u26cd\\u26cf-\\u26d3\\u26d5-\\u26e1\\u26e3\\u26e8-\\u26e9" +
    "\\u26eb-\\u26f1\\u26f4\\u26f6-\\u26f9\\u26fb-\\u26fc\\u26fe-\\u26ff\\u2776-\\u277f" +
    "\\u2b56-\\u2b59\\u3248-\\u324f\\ue000-\\uf8ff\\ufffd\\u{1f100}-\\u{1f10a}" +
    "\\u{1f110}-\\u{1f12d}\\u{1f130}-\\u{1f169}\\u{1f170}-\\u{1f18d}\\u{1f18f}-\\u{1f190}" +
    "\\u{1f19b}-\\u{1f1ac}\\u{f0000}-\\u{ffffd}\\u{100000}-\\u{10fffd}]",
  "u",
);

/** Characters beyond which text with characters of uncertain width is wrapped by the bound. */
const LONG_TEXT = 2_000;

let libraries: WidthLibraries | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the width libraries (once; later calls return the same promise). Afterwards every
 * function here measures exactly and `widthEpoch()` is 1.
 */
export function loadWidth(): Promise<void> {
  return loading ??= Promise.all([
    import("string-width"),
    import("wrap-ansi"),
    import("slice-ansi"),
  ]).then(([width, wrap, slice]) => {
    libraries = {
      stringWidth: width.default,
      wrapAnsi: wrap.default,
      sliceAnsi: slice.default,
    };
  });
}

/**
 * Runs each measure once on non-ASCII text once the libraries are in, one step per turn of the
 * event loop so keys typed meanwhile are handled in between: their first use builds Unicode
 * regexes (`bench/results/code_costs.md`), better spent behind the prompt than in the first
 * answer.
 */
export function warmWidth(): void {
  const steps = [
    () => visibleWidth("é 👍"),
    () => visibleWidth("👨‍👩‍👧"),
    () => wrapText("é — 👍", 4),
    () => truncateToWidth("é — 👍 ✓", 3),
  ];
  const next = () => {
    const step = steps.shift();
    if (!step || !libraries) return;
    step();
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}

/** 0 while widths are upper bounds, 1 once the libraries measure them: cache keys include it. */
export function widthEpoch(): number {
  return libraries ? 1 : 0;
}

/**
 * Cells `text` takes on screen; escape sequences count zero. Never less than a terminal draws:
 * text with characters of uncertain width (see above) counts by the upper bound.
 */
export function visibleWidth(text: string): number {
  if (isPlain(text)) return text.length;
  return libraries && !UNCERTAIN.test(text) ? libraries.stringWidth(text) : fallbackWidth(text);
}

/**
 * Cells `text` takes as the width libraries count it (grapheme clusters), the upper bound only
 * until they are loaded: for placing the editor's cursor in the person's own text, where the
 * upper bound would put it columns right of Thai, Indic or emoji text on most terminals. A row
 * a terminal draws wider is cut at the edge (the live region is drawn without auto-wrap).
 */
export function exactWidth(text: string): number {
  if (isPlain(text)) return text.length;
  return libraries ? libraries.stringWidth(text) : fallbackWidth(text);
}

/**
 * `text` (one or more lines) wrapped to `width` cells: at word boundaries where possible, hard
 * inside words longer than the width. Styles carry over line breaks.
 */
export function wrapText(text: string, width: number): string[] {
  return wrapWith(text, width, { trim: false, wordWrap: true });
}

/**
 * `text` wrapped at spaces to `width` cells (hard inside longer words), with the spaces at each
 * row's ends removed. Styles carry over line breaks.
 */
export function wrapTrimmed(text: string, width: number): string[] {
  return wrapWith(text, width, { trim: true, wordWrap: true });
}

/**
 * `text` wrapped at spaces to `width` cells as no terminal draws it wider: every code point
 * outside ASCII counts two cells, as a terminal set to draw East Asian "ambiguous" characters
 * wide (arrows, box drawing, Greek, Cyrillic: some CJK set-ups) draws them. For the facts of an
 * approval, drawn without auto-wrap, where a row counted narrower than drawn would lose its end
 * at the screen's edge unseen. Text of ASCII only wraps as {@linkcode wrapText} wraps it.
 */
export function wrapStrict(text: string, width: number): string[] {
  // deno-lint-ignore no-control-regex
  if (!/[^\x00-\x7f]/.test(text)) return wrapText(text, width);
  return fallbackWrap(text, Math.max(1, width), { trim: false, wordWrap: true, strict: true });
}

/** `text` broken every `width` cells, spaces and all (for code). Styles carry over. */
export function breakText(text: string, width: number): string[] {
  return wrapWith(text, width, { trim: false, wordWrap: false });
}

function wrapWith(text: string, width: number, options: { trim: boolean; wordWrap: boolean }) {
  const cells = Math.max(1, width);
  // Long text that the bound measures anyway is wrapped by it, in time linear in its length:
  // wrap-ansi took seconds on a long run of characters joined by ZWJ.
  if (!libraries || (text.length > LONG_TEXT && UNCERTAIN.test(text))) {
    return fallbackWrap(text, cells, options);
  }
  const rows = libraries.wrapAnsi(text, cells, { hard: true, ...options }).split("\n");
  // wrap-ansi measures with its own string-width (deno.json pins ours to the same version; they
  // differed on Devanagari conjuncts, Arabic number signs and lone surrogates): should a row
  // still come out too wide, it is broken again.
  return rows.flatMap((row) =>
    visibleWidth(row) <= cells ? [row] : fallbackWrap(row, cells, { ...options, wordWrap: false })
  );
}

/** `line` cut to at most `width` cells, ending with `ellipsis` when it was cut. */
export function truncateToWidth(line: string, width: number, ellipsis = "…"): string {
  if (width <= 0) return "";
  if (visibleWidth(line) <= width) return line;
  const room = Math.max(0, width - visibleWidth(ellipsis));
  let cut = libraries ? libraries.sliceAnsi(line, 0, room) : fallbackSlice(line, room).text;
  // slice-ansi too measures with its own string-width: should the cut be too wide, the bound
  // keeps the promise.
  if (libraries && visibleWidth(cut) > room) cut = fallbackSlice(line, room).text;
  // A style cut open would run into the ellipsis and beyond: close everything.
  return (line.includes("\x1b") ? cut + "\x1b[0m" : cut) + ellipsis;
}

/** `line` padded with spaces to exactly `width` cells (cut first when longer). */
export function padToWidth(line: string, width: number): string {
  const cut = truncateToWidth(line, width);
  return cut + " ".repeat(Math.max(0, width - visibleWidth(cut)));
}

/** Printable ASCII only: one cell per character, with or without the libraries. */
function isPlain(text: string): boolean {
  return !NOT_PLAIN.test(text);
}
