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
import { openFileVerified, type VerifiedFile } from "./verified_io.ts";
import { globFilter, GrepCollector, type GrepQuery } from "./grep_results.ts";
import { MAX_RG_JSON_LINE } from "./grep_ripgrep.ts";
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
    using opened = openFileVerified(query.workspace, file);
    if (opened === null) continue;
    await searchFile(
      opened,
      { path: rel, regex, context: query.context, signal: query.signal },
      collector,
    );
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

/**
 * Offers the matches of one file, with context, to the collector in line order, reading it a
 * chunk at a time: a file of any size is searched in bounded memory (one of 600 MB, read whole,
 * failed every search with "buffer exceeds maximum length"). A line over
 * {@linkcode MAX_RG_JSON_LINE} characters is left out and noted, as the ripgrep engine leaves it
 * out; at a NUL byte the file counts as binary and the search of it ends, as ripgrep's does.
 */
async function searchFile(
  file: VerifiedFile,
  search: { path: string; regex: LineMatcher; context: number; signal: AbortSignal },
  collector: GrepCollector,
): Promise<void> {
  const { path, regex, context } = search;
  /** Lines after the last match not offered yet (their number and text), `context` at most. */
  const before: [number, string][] = [];
  let after = 0;
  let number = 0;
  for await (const { text, long } of fileLines(file, search.signal)) {
    number++;
    if (long) collector.skipLongLine(path);
    if (!long && regex.test(text)) {
      for (const [n, t] of before) if (!collector.add(path, n, t, false)) return;
      before.length = 0;
      if (!collector.add(path, number, text, true)) return;
      after = context;
    } else if (after > 0) {
      after--;
      if (!collector.add(path, number, text, false)) return;
    } else if (context > 0) {
      before.push([number, text]);
      if (before.length > context) before.shift();
    }
  }
}

/** One line of a file, without its "\n": at most {@linkcode MAX_RG_JSON_LINE} characters of it. */
interface FileLine {
  text: string;
  /** The line was longer, and cut. */
  long: boolean;
}

/**
 * The lines of `file`, up to the read that holds its first NUL byte; throws when `signal`
 * fires, at the next chunk.
 */
async function* fileLines(file: VerifiedFile, signal: AbortSignal): AsyncGenerator<FileLine> {
  const decoder = new TextDecoder();
  let pending = "";
  let long = false;
  const line = (piece: string): FileLine => {
    const room = MAX_RG_JSON_LINE - pending.length;
    const done = { text: pending + piece.slice(0, room), long: long || piece.length > room };
    pending = "";
    long = false;
    return done;
  };
  for await (const chunk of file.chunks(undefined, signal)) {
    // As ripgrep does, a read holding a NUL byte ends the file: a small one is left out whole.
    if (chunk.includes(0)) return;
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      yield line(text.slice(start, nl));
      start = nl + 1;
    }
    const rest = line(text.slice(start));
    pending = rest.text;
    long = rest.long;
  }
  pending += decoder.decode();
  if (pending.length > 0 || long) yield line("");
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
