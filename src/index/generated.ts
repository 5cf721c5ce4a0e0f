/**
 * Generated files: made by a tool from other files, so the code index skips them (their sources
 * are what to search) and counts them. The rules are the well-known ones of GitHub Linguist
 * (lib/linguist/generated.rb) and Go's convention for generated code, kept narrow so that no
 * hand-written file matches by accident:
 *
 * - lock files, by name (`package-lock.json`, `Cargo.lock`, `go.sum`, …);
 * - source maps: a `.map` file holding a JSON source map;
 * - minified JavaScript or CSS: `.min.` in the name, or lines averaging over 110 characters;
 * - compiled JavaScript or CSS: a `sourceMappingURL` comment on one of its last three lines;
 * - a marker in a comment in the first ten lines: `@generated`, or one line saying both
 *   "generated" and "do not edit" (Go's `// Code generated … DO NOT EDIT.`, the protocol buffer
 *   compiler's).
 */

/** Lock files, by file name: written by package managers. */
const LOCK_FILES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lock",
  "deno.lock",
  "Cargo.lock",
  "composer.lock",
  "Gemfile.lock",
  "Pipfile.lock",
  "poetry.lock",
  "uv.lock",
  "flake.lock",
  "go.sum",
]);

/** The extensions of JavaScript and CSS, which minifiers and compilers write. */
const SCRIPT_OR_STYLE = /\.(?:[cm]?js|css)$/i;
/** Linguist's threshold: minified code averages longer lines than this. */
const MINIFIED_LINE_LENGTH = 110;
/** A source map's start: `{"version": 3, …` (Linguist's rule), also pretty-printed. */
const SOURCE_MAP = /^\s*\{\s*"version"\s*:\s*\d/;
/** A reference to the source map a compiler wrote beside its output. */
const MAP_REFERENCE = /^\s*(?:\/\/|\/\*)[#@]\s*sourceMappingURL=/;
const MARKER_LINES = 10;
const GENERATED_WORD = /\b(?:auto-?)?generated\b/i;
const DO_NOT_EDIT = /\bdo not (?:edit|modify)\b/i;
const GENERATED_TAG = /(?:^|[\s*#/;-])@generated\b/;
/** A line that starts as a comment does in the languages indexed (and HTML, SQL, Lisp, TeX). */
const COMMENT = /^\s*(?:\/\/|\/\*|\*|#|--|;|<!--|%)/;

/**
 * Why the file at `path` (workspace-relative, `/`-separated) with content `text` is generated,
 * in a few words; undefined when it is not.
 */
export function generatedBy(path: string, text: string): string | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (LOCK_FILES.has(name)) return "a lock file";
  if (/\.map$/i.test(name) && SOURCE_MAP.test(text.slice(0, 200))) return "a source map";
  if (SCRIPT_OR_STYLE.test(name)) {
    if (/\.min\.[^.]+$/i.test(name)) return "minified";
    if (text.length / lineCount(text) > MINIFIED_LINE_LENGTH) return "minified";
    if (lastLines(text, 3).some((line) => MAP_REFERENCE.test(line))) {
      return "compiled (it names its source map)";
    }
  }
  for (const line of firstLines(text, MARKER_LINES)) {
    if (!COMMENT.test(line)) continue;
    if (GENERATED_TAG.test(line)) return "marked @generated";
    if (GENERATED_WORD.test(line) && DO_NOT_EDIT.test(line)) return "marked generated";
  }
  return undefined;
}

function lineCount(text: string): number {
  let count = 1;
  for (
    let at = text.indexOf("\n");
    at >= 0 && at < text.length - 1;
    at = text.indexOf("\n", at + 1)
  ) {
    count++;
  }
  return count;
}

/** The last `count` lines that are not blank. */
function lastLines(text: string, count: number): string[] {
  const lines: string[] = [];
  let end = text.length;
  while (lines.length < count && end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end);
    if (line.trim() !== "") lines.push(line);
    end = start - 1;
  }
  return lines;
}

function firstLines(text: string, count: number): string[] {
  const lines: string[] = [];
  let start = 0;
  while (lines.length < count && start < text.length) {
    const end = text.indexOf("\n", start);
    lines.push(text.slice(start, end < 0 ? text.length : end));
    if (end < 0) break;
    start = end + 1;
  }
  return lines;
}
