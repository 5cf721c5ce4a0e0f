/**
 * The JavaScript engine of the `grep` tool, for when ripgrep is missing or not permitted (the
 * usual case in the tool worker, which may not start programs). It walks the workspace like
 * ripgrep does (sorted, .gitignore applied, symlinks and binary files skipped) and feeds the
 * same collector, so both engines print the same thing. Patterns run on RE2JS, a port of
 * RE2: linear in the input like ripgrep's engine, with its syntax (no backreferences or
 * lookaround), so a catastrophic pattern such as `(a+)+$` cannot hang the worker.
 */
import { relative } from "../core/path.ts";
import { ToolError } from "../core/observation.ts";
import { readFileVerified } from "./verified_io.ts";
import { globFilter, GrepCollector, type GrepQuery } from "./grep_results.ts";
import { IgnoreRules, walk } from "./ignore_rules.ts";

/** A compiled pattern: whether it matches somewhere in a line. */
interface LineMatcher {
  test(line: string): boolean;
}

/** Searches with RE2JS (linear time, ripgrep's syntax). */
export async function searchWithFallback(query: GrepQuery): Promise<GrepCollector> {
  const regex = await compileRegex(query.pattern, query.ignoreCase);
  const included = globFilter(query.glob);
  const collector = new GrepCollector(query.context, query.maxResults);
  const files = query.targetIsFile ? [query.target] : walkFiles(query);
  for await (const file of files) {
    const rel = relative(query.workspace, file);
    if (!query.targetIsFile && !included(rel)) continue;
    // Verified like read: a file swapped for a symlink mid-walk is skipped, not followed.
    const bytes = readFileVerified(query.workspace, file);
    if (bytes === null || bytes.includes(0)) continue;
    searchText(new TextDecoder().decode(bytes), rel, regex, query.context, collector);
    if (collector.done) break;
  }
  return collector;
}

async function* walkFiles(query: GrepQuery): AsyncGenerator<string> {
  const rules = new IgnoreRules(query.workspace);
  for await (const entry of walk(query.target, rules, { signal: query.signal })) {
    if (entry.isFile) yield entry.path;
  }
}

/** Offers the matches of one file, with context, to the collector in line order. */
function searchText(
  text: string,
  path: string,
  regex: LineMatcher,
  context: number,
  collector: GrepCollector,
): void {
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const matches: number[] = [];
  for (let i = 0; i < lines.length; i++) if (regex.test(lines[i])) matches.push(i);
  const isMatch = new Set(matches);
  let next = 0; // first line index not offered yet
  for (const m of matches) {
    const from = Math.max(next, m - context);
    const to = Math.min(lines.length - 1, m + context);
    for (let i = from; i <= to; i++) {
      // Lines up to the next match are emitted when that match is reached.
      if (i > m && isMatch.has(i)) break;
      if (!collector.add(path, i + 1, lines[i], i === m)) return;
      next = i + 1;
    }
  }
}

async function compileRegex(pattern: string, ignoreCase: boolean): Promise<LineMatcher> {
  // Loaded on the first search (about 260 KB of code that most runs never need).
  const { RE2JS } = await import("re2js");
  try {
    return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new ToolError("INVALID_ARGUMENTS", `Invalid regex "${pattern}": ${detail}`);
  }
}
