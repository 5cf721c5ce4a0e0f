/**
 * Unified diffs for edits: made with jsdiff, shown coloured, counted for a one-line summary.
 * jsdiff (21 modules) is not imported with this module: `loadDiff()` loads it, and the
 * interactive session has it loaded before it draws any tool call.
 */
import type { createTwoFilesPatch } from "diff";
import { visibleText } from "../core/terminal_text.ts";
import { clipToWidth } from "./clip.ts";
import { plural } from "./format.ts";
import type { Theme } from "./theme.ts";
import { breakText } from "./width.ts";

/** Lines of a diff kept before elision in `renderDiff`. */
const DEFAULT_MAX_LINES = 60;
/**
 * What one diff may cost before it gives up for {@linkcode replacement}: its time grows with the
 * lines changed times the lines there are (8,000 lines replaced by 8,000 others took 13 s), and
 * a model writes both texts of an edit it proposes.
 */
const MAX_DIFF_EDITS = 1_000;
const MAX_DIFF_MS = 2_000;

type Kind = "header" | "meta" | "hunk" | "added" | "removed" | "context" | "note";

let makePatch: typeof createTwoFilesPatch | undefined;
let loading: Promise<void> | undefined;

/** Loads jsdiff (once; later calls return the same promise). */
export function loadDiff(): Promise<void> {
  return loading ??= import("diff").then((jsdiff) => {
    makePatch = jsdiff.createTwoFilesPatch;
  });
}

/**
 * A unified diff of `before` → `after` with `--- a/path` and `+++ b/path` headers and `context`
 * lines around each change (default 3); "" when the texts are equal. Until `loadDiff()` has
 * finished, and where a minimal diff would take too long ({@linkcode MAX_DIFF_EDITS} line edits,
 * {@linkcode MAX_DIFF_MS}), a diff that replaces every line (correct, not minimal).
 */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return "";
  if (!makePatch) return replacement(path, before, after);
  const patch = makePatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, {
    context,
    maxEditLength: MAX_DIFF_EDITS,
    timeout: MAX_DIFF_MS,
  });
  if (patch === undefined) return replacement(path, before, after);
  // jsdiff starts with a "====…" separator line that carries nothing.
  return patch.startsWith("=") ? patch.slice(patch.indexOf("\n") + 1) : patch;
}

/** `before` → `after` as one hunk that removes every old line and adds every new one. */
function replacement(path: string, before: string, after: string): string {
  const side = (text: string, mark: string) => {
    if (text === "") return { range: "0,0", lines: "" };
    const lines = text.split("\n");
    const ended = lines.at(-1) === "";
    if (ended) lines.pop();
    const body = lines.map((line) => mark + line + "\n").join("");
    return {
      range: `1,${lines.length}`,
      lines: ended ? body : body + "\\ No newline at end of file\n",
    };
  };
  const old = side(before, "-");
  const now = side(after, "+");
  return `--- a/${path}\n+++ b/${path}\n@@ -${old.range} +${now.range} @@\n` + old.lines +
    now.lines;
}

/**
 * `patch` (unified diff text) as coloured lines, each cut to `width` cells: added lines green,
 * removed red, hunk headers cyan, file headers bold, other metadata dim. A patch longer than
 * `maxLines` (default 60) keeps its first and last lines, with a dim `… N more lines` line in
 * place of the middle, so the result has at most `maxLines` lines. Each line of the patch is
 * shown as written (`visibleText()`: escape sequences, carriage returns and other controls made
 * visible, never obeyed, runs of 24 or more spaces counted); tabs become two spaces.
 */
export function renderDiff(
  patch: string,
  width: number,
  theme: Theme,
  maxLines = DEFAULT_MAX_LINES,
): string[] {
  const lines = patchLines(patch);
  const kinds = classify(lines);
  const cells = Math.max(1, Math.floor(width));
  const style = (index: number) => paint(kinds[index], clipToWidth(lines[index], cells), theme);
  const limit = Math.max(1, Math.floor(maxLines));
  if (lines.length <= limit) return lines.map((_, index) => style(index));
  const head = Math.ceil((limit - 1) / 2);
  const tail = limit - 1 - head;
  const hidden = lines.length - head - tail;
  const marker = theme.dim(clipToWidth(`… ${plural(hidden, "more line")}`, cells));
  const shown: string[] = [];
  for (let index = 0; index < head; index++) shown.push(style(index));
  shown.push(marker);
  for (let index = lines.length - tail; index < lines.length; index++) shown.push(style(index));
  return shown;
}

/**
 * `patch` as numbered lines for people: each line of a hunk shows its line number (the new
 * file's for added and unchanged lines, the old file's for removed ones), a `+`, `-` or space,
 * and its text; the raw `@@ -a,b +c,d @@` headers are left out, and a dim `⋮` separates hunks.
 * File headers are dropped (the call line names the file). Colours, width and elision as in
 * `renderDiff`; with `options.wrap` (for approvals) a line longer than the width is broken onto
 * more rows instead of cut, so nothing of it is left out.
 */
export function numberedDiff(
  patch: string,
  width: number,
  theme: Theme,
  maxLines = DEFAULT_MAX_LINES,
  options: { wrap?: boolean } = {},
): string[] {
  const lines = patchLines(patch);
  const kinds = classify(lines);
  const numbers = lineNumbers(lines, kinds);
  const digits = String(Math.max(1, ...numbers.filter((n) => n !== undefined))).length;
  const cells = Math.max(1, Math.floor(width));
  const rows: string[] = [];
  const room = cells - digits - 3;
  // `head` then `text`: cut to the width, or broken onto rows under the head.
  const fit = (head: string, text: string) =>
    options.wrap && room >= 1
      ? breakText(text, room).map((row, i) => (i === 0 ? head : " ".repeat(head.length)) + row)
      : [clipToWidth(head + text, cells)];
  let hunks = 0;
  lines.forEach((line, index) => {
    const kind = kinds[index];
    if (kind === "header") return;
    if (kind === "hunk") {
      if (hunks++ > 0) rows.push(theme.dim(clipToWidth(`${" ".repeat(digits)} ⋮`, cells)));
      return;
    }
    const number = numbers[index] === undefined ? "" : String(numbers[index]);
    const gutter = number.padStart(digits);
    if (kind === "added" || kind === "removed" || kind === "context") {
      const mark = kind === "added" ? "+" : kind === "removed" ? "-" : " ";
      for (const text of fit(`${gutter} ${mark} `, line.slice(1))) {
        rows.push(kind === "context" ? theme.dim(text) : paint(kind, text, theme));
      }
    } else rows.push(...fit(`${" ".repeat(digits)}   `, line).map((text) => theme.dim(text)));
  });
  const limit = Math.max(1, Math.floor(maxLines));
  if (rows.length <= limit) return rows;
  const head = Math.ceil((limit - 1) / 2);
  const tail = limit - 1 - head;
  const marker = theme.dim(
    clipToWidth(`… ${plural(rows.length - head - tail, "more line")}`, cells),
  );
  return [...rows.slice(0, head), marker, ...rows.slice(rows.length - tail)];
}

/** Each hunk line's number: the new file's for added and context lines, the old's for removed. */
function lineNumbers(lines: readonly string[], kinds: readonly Kind[]): (number | undefined)[] {
  let oldAt = 0;
  let newAt = 0;
  return lines.map((line, index) => {
    switch (kinds[index]) {
      case "hunk": {
        const [, from, to] = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line) ?? [];
        oldAt = Number(from ?? 1);
        newAt = Number(to ?? 1);
        return undefined;
      }
      case "added":
        return newAt++;
      case "removed":
        return oldAt++;
      case "context":
        oldAt++;
        return newAt++;
      default:
        return undefined;
    }
  });
}

/** Lines added and removed in `patch` (headers are not counted, even when they look alike). */
export function diffSummary(patch: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const kind of classify(patchLines(patch))) {
    if (kind === "added") added++;
    else if (kind === "removed") removed++;
  }
  return { added, removed };
}

/**
 * The lines of `patch`, each made visible on its own: split first, so a carriage return or
 * line separator inside a line can never start a line of its own that reads as a header, a hunk
 * or a line of the other side. A line's own ending is dropped where every line of the file has
 * it (a CRLF file); elsewhere an added or removed line shows its `␍`, and its trailing blanks as
 * `·` (a space) and `→` (a tab), so a change of line ending or of trailing blanks alone is seen.
 * Tabs become two spaces.
 */
export function patchLines(patch: string): string[] {
  if (patch === "") return [];
  const lines = patch.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const body = lines.filter((line) => /^[-+ ]/.test(line) && !/^(?:\+\+\+|---) /.test(line));
  const crlf = body.length > 0 && body.every((line) => line.endsWith("\r"));
  return lines.map((line) => {
    const changed = /^[-+]/.test(line) && !/^(?:\+\+\+|---) /.test(line);
    const ending = line.endsWith("\r") && (!crlf || !/^[-+ ]/.test(line)) ? "\r" : "";
    const bare = line.endsWith("\r") ? line.slice(0, -1) : line;
    const kept = /^[-+ ]/.test(bare) ? 1 : 0;
    const [, text, blanks] = bare.slice(kept).match(/^(.*?)([ \t]*)$/s)!;
    const shownBlanks = changed && blanks.length < 24
      ? blanks.replaceAll(" ", "·").replaceAll("\t", "→")
      : visibleText(blanks.replaceAll("\t", "  "), { spaces: 24 });
    return bare.slice(0, kept) + visibleText(text.replaceAll("\t", "  "), { spaces: 24 }) +
      shownBlanks + (ending === "" ? "" : changed ? "␍" : "");
  });
}

/** Outside a counted hunk (a hand-written or miscounted patch), the first character decides. */
const LOOSE_KINDS: Record<string, Kind> = {
  "+": "added",
  "-": "removed",
  " ": "context",
  "\\": "note",
};

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * What each line is. Inside a hunk the header's line counts decide, so a removed line that
 * reads "--- x" is a removal and not a file header.
 */
function classify(lines: readonly string[]): Kind[] {
  const kinds: Kind[] = [];
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of lines) {
    const first = line[0];
    if (oldLeft > 0 || newLeft > 0) {
      if (first === "+") {
        newLeft--;
        kinds.push("added");
        continue;
      }
      if (first === "-") {
        oldLeft--;
        kinds.push("removed");
        continue;
      }
      if (first === " " || line === "") {
        oldLeft--;
        newLeft--;
        kinds.push("context");
        continue;
      }
      if (first === "\\") {
        kinds.push("note");
        continue;
      }
      oldLeft = newLeft = 0; // a malformed hunk ends here; read the line as a header
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldLeft = Number(hunk[1] ?? 1);
      newLeft = Number(hunk[2] ?? 1);
      kinds.push("hunk");
    } else if (line.startsWith("--- ") || line.startsWith("+++ ")) kinds.push("header");
    else kinds.push(LOOSE_KINDS[first] ?? "meta");
  }
  return kinds;
}

function paint(kind: Kind, text: string, theme: Theme): string {
  switch (kind) {
    case "added":
      return theme.green(text);
    case "removed":
      return theme.red(text);
    case "hunk":
      return theme.cyan(text);
    case "header":
      return theme.bold(text);
    case "context":
      return text;
    default:
      return theme.dim(text);
  }
}
