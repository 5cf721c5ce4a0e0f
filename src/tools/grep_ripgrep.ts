/** The ripgrep engine of the `grep` tool: runs `rg --json` and feeds its lines to a collector. */
import { join, relative } from "../core/path.ts";
import { ToolError } from "../core/observation.ts";
import { globFilter, GrepCollector, type GrepQuery } from "./grep_results.ts";
import { safeEnv } from "../sandbox/process.ts";
import { after } from "../core/timer.ts";
import { FIFO_CHECK_MS } from "../core/fifo_search.ts";

/** rg JSON messages carry text as `{text}`, or `{bytes}` (base64) when it is not UTF-8. */
interface RgData {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: string;
  data?: { path?: RgData; lines?: RgData; line_number?: number };
}

/** The ignore files rg opens itself (`.rgignore` too: no switch of rg's turns it off alone). */
const RG_IGNORE_FILES = [".gitignore", ".rgignore"];

/**
 * Searches with the ripgrep binary `rgPath`. Returns null when it cannot be started (missing,
 * or not permitted), or when it waits on a FIFO named like an ignore file (rg opens those with a
 * blocking open: a command's `mkfifo .gitignore` held every search to the tool's timeout; found
 * once rg has run {@linkcode FIFO_CHECK_MS}), so the caller falls back to the JavaScript engine,
 * which never waits on one. Ignore handling matches the fallback: the workspace's .gitignore
 * files apply without a git repository; .ignore, global and `.git/info/exclude` rules do not;
 * hidden files are searched, `.git` never. rg also reads `.rgignore` files, which the fallback
 * does not.
 */
export async function searchWithRipgrep(
  rgPath: string,
  query: GrepQuery,
): Promise<GrepCollector | null> {
  const target = relative(query.workspace, query.target) || ".";
  const args = [
    "--json",
    "--no-config",
    "--sort=path",
    "--hidden",
    "--no-require-git",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--glob=!.git",
    // Rust's regex engine alone, linear in the input: `auto` would hand a pattern with look-around
    // or backreferences to PCRE2, which backtracks.
    "--engine=default",
    query.ignoreCase ? "--ignore-case" : "--case-sensitive",
    `--context=${query.context}`,
  ];
  args.push(...typeFilter(query), "--regexp", query.pattern, "--", target);
  // rg's own --glob would re-include ignored files; the shared predicate decides instead.
  const included = query.targetIsFile ? () => true : globFilter(query.glob);

  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(rgPath, {
      args,
      cwd: query.workspace,
      env: safeEnv(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    const unavailable = error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
    if (unavailable) return null;
    throw error;
  }

  const collector = new GrepCollector(query.context, query.maxResults);
  const stop = () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
  };
  query.signal.addEventListener("abort", stop, { once: true });
  let waitsOnFifo = false;
  const check = after(FIFO_CHECK_MS, () => {
    hasIgnoreFifo(query.workspace).then((found) => {
      if (!found) return;
      waitsOnFifo = true;
      stop();
    });
  });
  const stderr = new Response(child.stderr).text();
  try {
    for await (const line of jsonLines(child.stdout)) {
      if (typeof line !== "string") {
        const path = overlongPath(line.overlong)?.replace(/^\.\//, "");
        if (path !== undefined && included(path)) collector.skipLongLine(path);
        continue;
      }
      const message = JSON.parse(line) as RgMessage;
      if (message.type !== "match" && message.type !== "context") continue;
      const data = message.data ?? {};
      const path = decodeRgText(data.path).replace(/^\.\//, "");
      if (!included(path)) continue;
      const keep = collector.add(
        path,
        data.line_number ?? 0,
        decodeRgText(data.lines),
        message.type === "match",
      );
      if (!keep) {
        stop();
        break;
      }
    }
  } finally {
    query.signal.removeEventListener("abort", stop);
    check.cancel();
  }
  const status = await child.status;
  const errors = (await stderr).trim();
  query.signal.throwIfAborted();
  if (waitsOnFifo) return null;
  if (status.code === 2 && !collector.done) {
    if (/regex parse error|error parsing/i.test(errors)) {
      const what = /glob|type/i.test(errors) ? `glob "${query.glob}"` : `regex "${query.pattern}"`;
      throw new ToolError("INVALID_ARGUMENTS", `Invalid ${what}: ${errors}`);
    }
    // Files or folders it could not read (the sandbox's view makes what a deny rule hides
    // unreadable) are skipped, as the JavaScript engine skips them, and not named: a name the
    // view hides stays hidden.
    const unreadable = errors.split("\n").every((line) => /\(os error \d+\)$/.test(line.trim()));
    if (collector.lines.length === 0 && !unreadable) {
      throw new ToolError("EXECUTION_FAILED", `ripgrep failed: ${errors || `exit code 2`}`);
    }
  }
  return collector;
}

/** Folders {@linkcode hasIgnoreFifo} reads at most. */
const MAX_FIFO_SEARCH_FOLDERS = 50_000;

/**
 * Whether a folder under `root` holds a FIFO named like an ignore file rg opens
 * ({@linkcode RG_IGNORE_FILES}). Read here, in the worker (which may start no `find`): folder
 * listings only, no link followed, `.git` folders skipped, at most
 * {@linkcode MAX_FIFO_SEARCH_FOLDERS} of them. Never throws.
 */
async function hasIgnoreFifo(root: string): Promise<boolean> {
  const folders = [root];
  for (let read = 0; folders.length > 0 && read < MAX_FIFO_SEARCH_FOLDERS; read++) {
    const folder = folders.pop()!;
    try {
      for await (const entry of Deno.readDir(folder)) {
        if (entry.isDirectory && entry.name !== ".git") folders.push(join(folder, entry.name));
        else if (!entry.isFile && !entry.isSymlink && RG_IGNORE_FILES.includes(entry.name)) {
          if ((await Deno.lstat(join(folder, entry.name))).isFifo) return true;
        }
      }
    } catch {
      // A folder that cannot be read: rg cannot read it either.
    }
  }
  return false;
}

/**
 * A glob on file names only ("*.{ts,tsx}", "!*.md") becomes an rg file type, which narrows the
 * search without overriding .gitignore the way `--glob` does. Path globs are filtered later.
 */
function typeFilter(query: GrepQuery): string[] {
  const glob = query.glob;
  if (glob === undefined || query.targetIsFile || glob.includes("/")) return [];
  const exclude = glob.startsWith("!");
  const name = exclude ? glob.slice(1) : glob;
  if (name === "" || name.includes(":")) return [];
  return [`--type-add=tern:${name}`, exclude ? "--type-not=tern" : "--type=tern"];
}

/**
 * The longest line of `rg --json` read whole, in characters: each line holds one line of a
 * searched file, and rg's `--max-columns` does not apply to JSON, so one file with a line of
 * hundreds of MB would otherwise fill tern's memory and fail the whole search.
 */
export const MAX_RG_JSON_LINE = 1024 * 1024;

/** A line of `rg --json` longer than {@linkcode MAX_RG_JSON_LINE}: only its start is kept. */
interface Overlong {
  overlong: string;
}

async function* jsonLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string | Overlong> {
  let pending = "";
  /** The start of the line being skipped, once it has grown past the limit. */
  let skipping: string | undefined;
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (pending + text).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (skipping !== undefined) {
        yield { overlong: skipping };
        skipping = undefined;
      } else if (line.trim() !== "") yield line;
    }
    if (skipping === undefined && pending.length > MAX_RG_JSON_LINE) {
      skipping = pending.slice(0, 4096);
    }
    if (skipping !== undefined) pending = "";
  }
  if (skipping !== undefined) yield { overlong: skipping };
  else if (pending.trim() !== "") yield pending;
}

/** The file a cut `rg --json` line is about, from the start of it (the path comes first). */
function overlongPath(start: string): string | undefined {
  const found = /^\{"type":"(?:match|context)","data":\{"path":\{"text":("(?:[^"\\]|\\.)*")/.exec(
    start,
  );
  if (found === null) return undefined;
  try {
    return JSON.parse(found[1]) as string;
  } catch {
    return undefined;
  }
}

function decodeRgText(data: RgData | undefined): string {
  if (data?.text !== undefined) return data.text;
  if (data?.bytes !== undefined) {
    return new TextDecoder().decode(Uint8Array.fromBase64(data.bytes));
  }
  return "";
}
