/**
 * What both grep engines (ripgrep and the JavaScript fallback) share: the query, the collector
 * that caps results the same way for both, and the `path:line:text` output format.
 */
import ignore from "ignore";
import { ToolError } from "../core/observation.ts";

/** One search, with paths already resolved inside the workspace. */
export interface GrepQuery {
  pattern: string;
  ignoreCase: boolean;
  /** Lines of context before and after each match. */
  context: number;
  /** Matching lines collected at most. */
  maxResults: number;
  /** rg-style glob filter, relative to `workspace` ("!" excludes). */
  glob?: string;
  /**
   * Absolute real path of the folder the search stays in: the workspace root, or the granted
   * root that holds the target. Collected paths are relative to it.
   */
  workspace: string;
  /** Absolute real path of the file or folder to search. */
  target: string;
  targetIsFile: boolean;
  signal: AbortSignal;
}

/** Lines longer than this are cut in the output. */
export const MAX_GREP_LINE_CHARS = 500;

interface GrepLine {
  path: string;
  number: number;
  text: string;
  match: boolean;
}

/**
 * Collects matching and context lines in the order an engine finds them, and decides where
 * to stop: after `maxResults` matches it keeps only that match's trailing context.
 */
export class GrepCollector {
  readonly lines: GrepLine[] = [];
  matches = 0;
  /** True once a line beyond the cap was offered: there are more matches than shown. */
  more = false;
  /** Files with a line too long to read whole (over a MiB), which is left out. */
  readonly longLines = new Set<string>();
  #context: number;
  #max: number;
  #trailing = 0;

  constructor(context: number, maxResults: number) {
    this.#context = context;
    this.#max = maxResults;
  }

  /** True once no more lines are wanted; engines stop searching then. */
  get done(): boolean {
    return this.more;
  }

  /** Notes a line of `path` left out for its length. */
  skipLongLine(path: string): void {
    this.longLines.add(path);
  }

  /** Offers the next line; returns false when the engine should stop. */
  add(path: string, number: number, text: string, match: boolean): boolean {
    if (this.more) return false;
    if (this.matches >= this.#max) {
      const last = this.lines[this.lines.length - 1];
      if (match || path !== last.path || this.#trailing >= this.#context) {
        this.more = true;
        return false;
      }
      this.#trailing++;
    }
    if (match) this.matches++;
    this.lines.push({ path, number, text: stripEol(text), match });
    return true;
  }
}

/**
 * Formats collected lines as `path:line:text` (context lines `path-line-text`, groups split by
 * `--`). `label` turns a collected path into the one printed; default unchanged.
 */
export function formatGrep(
  collector: GrepCollector,
  context: number,
  label: (path: string) => string = (path) => path,
): string {
  const out: string[] = [];
  let previous: GrepLine | undefined;
  for (const line of collector.lines) {
    const adjacent = previous?.path === line.path && previous.number + 1 === line.number;
    if (context > 0 && previous !== undefined && !adjacent) out.push("--");
    out.push(
      `${label(line.path)}${line.match ? ":" : "-"}${line.number}${line.match ? ":" : "-"}${
        cut(line.text)
      }`,
    );
    previous = line;
  }
  return out.join("\n");
}

function stripEol(text: string): string {
  if (text.endsWith("\r\n")) return text.slice(0, -2);
  if (text.endsWith("\n") || text.endsWith("\r")) return text.slice(0, -1);
  return text;
}

function cut(text: string): string {
  if (text.length <= MAX_GREP_LINE_CHARS) return text;
  return `${
    text.slice(0, MAX_GREP_LINE_CHARS)
  } [... line cut at ${MAX_GREP_LINE_CHARS} characters]`;
}

/**
 * A predicate for workspace-relative paths from an rg-style glob: gitignore syntax, `{a,b}`
 * alternatives, and a leading "!" to exclude instead of include.
 */
export function globFilter(glob: string | undefined): (path: string) => boolean {
  if (glob === undefined) return () => true;
  const exclude = glob.startsWith("!");
  const matcher = ignore({ ignorecase: false }).add(expandBraces(exclude ? glob.slice(1) : glob));
  return (path) => matcher.ignores(path) !== exclude;
}

/** Most patterns one glob may expand to: `{a,b}` twenty times over would be a million. */
export const MAX_BRACE_EXPANSIONS = 256;

/**
 * Expands `{a,b}` groups (nested allowed): "*.{ts,tsx}" → ["*.ts", "*.tsx"].
 * @throws {ToolError} INVALID_ARGUMENTS past {@linkcode MAX_BRACE_EXPANSIONS} patterns.
 */
export function expandBraces(glob: string): string[] {
  const patterns = expandWithin(glob, { left: MAX_BRACE_EXPANSIONS });
  if (patterns === null) {
    throw new ToolError(
      "INVALID_ARGUMENTS",
      `Invalid glob "${glob}": its {…} groups make more than ${MAX_BRACE_EXPANSIONS} patterns`,
    );
  }
  return patterns;
}

/** The expansion of `glob`, or null once more than `budget.left` patterns were made. */
function expandWithin(glob: string, budget: { left: number }): string[] | null {
  const open = glob.indexOf("{");
  if (open === -1) return --budget.left < 0 ? null : [glob];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < glob.length; i++) {
    const c = glob[i];
    if (c === "{") depth++;
    else if (c === "," && depth === 1) commas.push(i);
    else if (c === "}" && --depth === 0) {
      if (commas.length === 0) break;
      const head = glob.slice(0, open);
      const tail = glob.slice(i + 1);
      const bounds = [open, ...commas, i];
      const out: string[] = [];
      for (let k = 0; k < bounds.length - 1; k++) {
        const part = expandWithin(head + glob.slice(bounds[k] + 1, bounds[k + 1]) + tail, budget);
        if (part === null) return null;
        out.push(...part);
      }
      return out;
    }
  }
  return --budget.left < 0 ? null : [glob];
}
