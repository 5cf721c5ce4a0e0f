/**
 * `@path` mentions in a prompt: completion of a partial path under the workspace, and
 * expansion of the mentioned files (or directory listings) into blocks appended to the message.
 * Nothing outside the workspace is ever listed or read, symbolic links included.
 */
import { isAbsolute, join, relative, resolve, sep } from "../core/path.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";
import { lstatOrNull, openVerified } from "../core/verified_open.ts";

const SKIPPED = new Set([".git", "node_modules"]);
const BINARY_PROBE_BYTES = 8192;
const MAX_LISTING = 200;
/** Names of a folder read and sorted for its listing at most; the rest are counted. */
const MAX_READ_NAMES = 5_000;
/** Mentions looked at in one message; a pasted text naming thousands gets one line for the rest. */
export const MAX_MENTIONS = 100;
/** `@` at the start or after whitespace, then everything up to the next whitespace. */
const MENTION = /(?<=^|\s)@(\S+)/g;
/** Characters that end a sentence or a bracket after a mention, not part of its path. */
const TRAILING_PUNCTUATION = new Set(",.;:!?)]}'\"`");

/**
 * Workspace-relative paths that start with `partial`, directories ending in "/", sorted, at most
 * `limit`. Lists the directory part of `partial` and keeps entries starting with the name part;
 * hidden entries only when the name part starts with "."; never `.git` or `node_modules`, nor a
 * name with whitespace, which a mention cannot hold. An
 * absolute `partial`, one with a ".." component, or one whose directory resolves outside the
 * workspace gives nothing. Never throws.
 */
export async function completePath(
  workspace: string,
  partial: string,
  limit = 50,
): Promise<string[]> {
  if (isAbsolute(partial) || partial.startsWith("~") || partial.split("/").includes("..")) {
    return [];
  }
  const slash = partial.lastIndexOf("/");
  const dirPart = partial.slice(0, slash + 1);
  const name = partial.slice(slash + 1);
  try {
    const dir = await Deno.realPath(join(workspace, dirPart));
    if (!isInside(await Deno.realPath(workspace), dir)) return [];
    const found: string[] = [];
    for await (const entry of Deno.readDir(dir)) {
      if (SKIPPED.has(entry.name) || !entry.name.startsWith(name)) continue;
      // A mention ends at whitespace: `@setup guide.md` would attach a file named `setup`.
      if (/\s/.test(entry.name)) continue;
      if (entry.name.startsWith(".") && !name.startsWith(".")) continue;
      const isDirectory = entry.isDirectory ||
        (entry.isSymlink &&
          (await Deno.stat(join(dir, entry.name)).catch(() => null))?.isDirectory);
      found.push(dirPart + entry.name + (isDirectory ? "/" : ""));
    }
    return found.sort().slice(0, limit);
  } catch {
    return [];
  }
}

/** The message with its mentions expanded, what was attached, and why some were not. */
export interface ExpandedMentions {
  /** The original text followed by one block per attached file or directory. */
  text: string;
  /** Workspace-relative paths attached, in order of first mention. */
  attached: string[];
  /** One line per mention that was not attached, like `@foo.ts: not found`. */
  errors: string[];
}

/**
 * Appends the files and directories that `text` mentions as `@path` (at the start or after
 * whitespace; trailing `,.;:!?)` and quotes are not part of the path) as
 * `<file path="…">…</file>` and `<directory path="…">…</directory>` blocks. Each file is cut at
 * `maxBytes` (default 100,000) with a `[truncated: N bytes more]` line; binary files (a NUL in the
 * first 8 KB), special files, missing paths and paths whose real location is outside the
 * workspace are reported in `errors` instead. Mentions in `skip` (images, which the caller
 * attaches) are left as they are. A file is attached once however often and however it is
 * named; at most `MAX_MENTIONS` different mentions are looked at, the rest get one line in
 * `errors`. Never throws.
 */
export async function expandMentions(
  text: string,
  workspace: string,
  options: {
    maxBytes?: number;
    skip?: ReadonlySet<string>;
    /** The text whose mentions are attached (what the person typed); default `text`. */
    from?: string;
    /**
     * Why a file or folder may not be attached, given its real path and the path as named: what
     * the model's own tools may not read (src/harness/read_guard.ts: the person's deny rules, home
     * secret locations, tern's home).
     */
    refuse?: ReadRefusal;
    /**
     * The text with the keys tern holds masked (`Conversation.maskKnownKeys`), applied to each
     * file's content and listing: as the read tool's output is, so naming a file that holds a
     * key does not hand the key to the model. Default: unchanged.
     */
    mask?: (text: string) => string;
  } = {},
): Promise<ExpandedMentions> {
  const maxBytes = options.maxBytes ?? 100_000;
  const attached: string[] = [];
  const errors: string[] = [];
  const blocks: string[] = [];
  const seen = new Set<string>();
  let root: string;
  try {
    root = await Deno.realPath(workspace);
  } catch {
    root = resolve(workspace);
  }
  let skipped = 0;
  for (const match of (options.from ?? text).matchAll(MENTION)) {
    const mention = withoutTrailingPunctuation(match[1]);
    if (mention === "" || seen.has(mention) || options.skip?.has(mention)) continue;
    seen.add(mention);
    if (seen.size > MAX_MENTIONS) {
      skipped++;
      continue;
    }
    const result = await attach(mention, workspace, root, maxBytes, options);
    if (typeof result === "string") {
      errors.push(`@${mention}: ${result}`);
    } else if (!attached.includes(result.path)) {
      // Once per file, however it is spelled (`@a.ts`, `@./a.ts`, `@././a.ts`).
      attached.push(result.path);
      blocks.push(result.block);
    }
  }
  if (skipped > 0) {
    errors.push(`${skipped} more mentions not attached: at most ${MAX_MENTIONS} in one message`);
  }
  return { text: text + blocks.join(""), attached, errors };
}

/**
 * `mention` without the punctuation at its end (`@a.ts,` names `a.ts`). A loop from the end,
 * not a regular expression: `/[…]+$/` tries every start in a run of punctuation, and a pasted
 * `@` followed by a million `)` and a letter held tern for half an hour.
 */
export function withoutTrailingPunctuation(mention: string): string {
  let end = mention.length;
  while (end > 0 && TRAILING_PUNCTUATION.has(mention[end - 1])) end--;
  return mention.slice(0, end);
}

/** The block for one mention, or why it cannot be attached. */
async function attach(
  mention: string,
  workspace: string,
  root: string,
  maxBytes: number,
  { refuse, mask = (text) => text }: {
    refuse?: ReadRefusal;
    mask?: (text: string) => string;
  },
): Promise<{ path: string; block: string } | string> {
  if (isAbsolute(mention) || mention.split("/").includes("..")) return "outside the workspace";
  const path = relative(resolve(workspace), resolve(workspace, mention)) || ".";
  let real: string;
  try {
    real = await Deno.realPath(join(workspace, mention));
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "not found" : describe(error);
  }
  if (!isInside(root, real)) return "outside the workspace";
  // Decided where the mention points and where it leads, as the path rules decide a `read`.
  const refused = refuse?.(real, join(workspace, mention));
  if (refused !== undefined) return `not attached: ${refused}`;
  try {
    const info = lstatOrNull(real);
    if (info === null) return "not found";
    if (info.isDirectory) {
      const listing = await listDirectory(real);
      const fenced = unclosable(mask(listing));
      return { path, block: `\n\n<directory path="${quote(path)}">\n${fenced}\n</directory>` };
    }
    if (!info.isFile) return "not a regular file";
    // A hard link may be a file outside the workspace under a name inside it.
    if ((info.nlink ?? 1) > 1) return "a file with more than one link, not attached";
    // Opened as the file checked: a link swapped in meanwhile is refused, not followed.
    using opened = openVerified({ path: join(workspace, mention), real, info });
    if (opened.links > 1) return "a file with more than one link, not attached";
    const head = opened.head(Math.min(opened.size, maxBytes));
    if (head.subarray(0, BINARY_PROBE_BYTES).includes(0)) return "binary file, not attached";
    const cut = head.length < opened.size ? utf8Boundary(head, head.length) : head.length;
    let content = new TextDecoder().decode(head.subarray(0, cut)).replace(/\n$/, "");
    const rest = opened.size - cut;
    if (rest > 0) content += `\n[truncated: ${rest} bytes more]`;
    const fenced = unclosable(mask(content));
    return { path, block: `\n\n<file path="${quote(path)}">\n${fenced}\n</file>` };
  } catch (error) {
    return describe(error);
  }
}

/** True when `path` is `root` or below it, compared by path components. */
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!isAbsolute(rel) && rel.split(sep)[0] !== "..");
}

/**
 * The first MAX_LISTING names of `dir` in order, and how many more. Past MAX_READ_NAMES the
 * names are counted, not kept: a repository's folder of 300,000 files would otherwise be held
 * whole to show 200 of them. The order is then that of the names read first.
 */
async function listDirectory(dir: string): Promise<string> {
  const names: string[] = [];
  let total = 0;
  for await (const entry of Deno.readDir(dir)) {
    if (SKIPPED.has(entry.name)) continue;
    if (++total > MAX_READ_NAMES) continue;
    names.push(quotedName(entry.name) + (entry.isDirectory ? "/" : ""));
  }
  names.sort();
  const shown = names.slice(0, MAX_LISTING);
  const of = total > MAX_READ_NAMES
    ? `; the names shown are sorted among the first ${MAX_READ_NAMES} read`
    : "";
  if (total > MAX_LISTING) shown.push(`[${total - MAX_LISTING} more entries${of}]`);
  return shown.join("\n");
}

/** The largest length ≤ `end` that does not cut a UTF-8 character. */
function utf8Boundary(bytes: Uint8Array, end: number): number {
  let cut = end;
  while (cut > 0 && cut > end - 4 && (bytes[cut - 1] & 0xc0) === 0x80) cut--;
  if (cut > 0 && bytes[cut - 1] >= 0xc0) {
    const lead = bytes[cut - 1];
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    return end - (cut - 1) >= length ? end : cut - 1;
  }
  return end;
}

/**
 * `content` that cannot close its block: text after a `</file>` or `</directory>` (any case,
 * blanks inside the tag) would read as the person's own, so the slash of every such tag is
 * escaped.
 */
function unclosable(content: string): string {
  return content.replace(CLOSING_TAG, "<$1\\/$2");
}

const CLOSING_TAG = /<(\s*)\/(\s*(?:file|directory))(?![\w-])/gi;

/**
 * A repository's file name as the model sees it in a listing: quoted as a JSON string, with every
 * control and line or paragraph separator escaped, when it holds one (like the `list` tool), so
 * it cannot add rows of its own; otherwise as it is.
 */
function quotedName(name: string): string {
  if (!CONTROL.test(name)) return name;
  return JSON.stringify(name).replace(
    CONTROLS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// deno-lint-ignore no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function quote(path: string): string {
  return path.replaceAll("&", "&amp;").replaceAll('"', "&quot;");
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
