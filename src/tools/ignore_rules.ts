/**
 * .gitignore handling shared by list, glob and grep: the workspace's own .gitignore files, at
 * the root and in nested folders, with git's precedence (deeper files win). Global excludes and
 * `.git/info/exclude` are not read. The `.git` folder is always ignored.
 */
import { dirname, join, relative } from "../core/path.ts";
import ignore from "ignore";
import { isInside, lstatOrNull } from "./paths.ts";
import { openUnchanged } from "../core/verified_open.ts";
import { MAX_GLOBSTARS } from "../core/glob_cost.ts";

type Matcher = ReturnType<typeof ignore>;

/** A .gitignore compiled: its matcher and how many patterns it holds. */
interface Compiled {
  matcher: Matcher;
  patterns: number;
}

/**
 * Stands for a folder whose .gitignore came after the rules' pattern budget was spent
 * ({@linkcode GITIGNORE_LIMITS}`.totalPatterns`): everything below it counts as ignored.
 */
const OVER_BUDGET = "over budget";

/** The .gitignore rules of one workspace, loaded folder by folder as a walk reaches them. */
export class IgnoreRules {
  /** Absolute real path of the workspace root. */
  readonly root: string;
  #byDir = new Map<string, Matcher | null | typeof OVER_BUDGET>();
  /** How many of the loaded folders have rules: with none, only `.git` is ever ignored. */
  #matchers = 0;
  /** Patterns of all the .gitignore files loaded so far. */
  #patterns = 0;
  /** Folders left out whole because their .gitignore came past the pattern budget. */
  readonly overBudget: string[] = [];

  constructor(root: string) {
    this.root = root;
  }

  /**
   * Loads the .gitignore of folder `dir` (absolute, inside the root), once. Past
   * {@linkcode GITIGNORE_LIMITS}`.totalPatterns` patterns in all, a folder whose .gitignore
   * would add more is treated as ignored whole (and named in {@linkcode overBudget}): a
   * repository's .gitignore files could otherwise make every walk compile and test millions
   * of patterns, and leaving its files out hides nothing it could not hide with a pattern.
   */
  async load(dir: string): Promise<void> {
    if (this.#byDir.has(dir) || !isInside(this.root, dir)) return;
    const room = GITIGNORE_LIMITS.totalPatterns - this.#patterns;
    const compiled = await readGitignore(join(dir, ".gitignore"), room);
    if (compiled === null) return this.#set(dir, null);
    if (compiled === OVER_BUDGET) {
      this.#byDir.set(dir, OVER_BUDGET);
      this.#matchers++;
      this.overBudget.push(dir);
      return;
    }
    this.#patterns += compiled.patterns;
    this.#set(dir, compiled.matcher);
  }

  /**
   * {@linkcode load} for a folder just listed: without a `.gitignore` among its `entries`
   * nothing is looked up.
   */
  async loadListed(dir: string, entries: readonly Deno.DirEntry[]): Promise<void> {
    if (this.#byDir.has(dir)) return;
    if (entries.some((entry) => entry.name === ".gitignore")) await this.load(dir);
    else if (isInside(this.root, dir)) this.#set(dir, null);
  }

  #set(dir: string, matcher: Matcher | null): void {
    this.#byDir.set(dir, matcher);
    if (matcher) this.#matchers++;
  }

  /** Loads the .gitignore files of every folder from the root down to `dir` itself. */
  async loadAncestors(dir: string): Promise<void> {
    const chain: string[] = [];
    for (let d = dir; isInside(this.root, d); d = dirname(d)) {
      chain.push(d);
      if (d === this.root) break;
    }
    for (const d of chain.reverse()) await this.load(d);
  }

  /**
   * True when the entry at absolute `path` is ignored by the loaded rules or is `.git`.
   * Rules of folders not loaded yet are not consulted, so callers load top-down
   * ({@linkcode loadAncestors}, or {@linkcode load} while walking).
   */
  ignores(path: string, isDirectory: boolean): boolean {
    if (!isInside(this.root, path) || path === this.root) return false;
    // Below the root, the path's own spelling: cut rather than path.relative(), which
    // normalises (per entry of a walk, it shows).
    const prefix = this.root.endsWith("/") ? this.root : `${this.root}/`;
    const rel = isClean(path) && path.startsWith(prefix)
      ? path.slice(prefix.length)
      : relative(this.root, path);
    const parts = rel.split("/");
    if (parts.includes(".git")) return true;
    if (this.#matchers === 0) return false;
    let ignored = false;
    let dir = this.root;
    for (let i = 0; i < parts.length; i++) {
      const matcher = this.#byDir.get(dir);
      if (matcher === OVER_BUDGET) return true;
      if (matcher) {
        const sub = parts.slice(i).join("/") + (isDirectory ? "/" : "");
        const result = matcher.test(sub);
        if (result.ignored) ignored = true;
        else if (result.unignored) ignored = false;
      }
      // One part longer each step: deep paths cost their depth, not its square.
      dir = i === 0 ? `${prefix}${parts[0]}` : `${dir}/${parts[i]}`;
    }
    return ignored;
  }
}

/**
 * The most of one .gitignore that is read, and the most patterns kept of it: a repository's
 * file may be of any size (a 70 MB one ran tern's process out of memory, and every path is
 * tested against every pattern), and real ones are a few KB. Past either limit the rest is not
 * used: the walk then shows files a longer file would have hidden, never fewer.
 */
export const GITIGNORE_LIMITS = {
  bytes: 256 * 1024,
  patterns: 10_000,
  /**
   * The most patterns of all the .gitignore files one {@linkcode IgnoreRules} (one walk) uses:
   * 300 folders of 10,000 patterns each made every code search spend 50 s compiling them.
   */
  totalPatterns: 50_000,
} as const;

/**
 * Compiled .gitignore files by identity (device, inode, size, modification time), for the
 * process: a walk does not compile again a file no one changed. At most
 * {@linkcode COMPILED_CACHE_MAX} are kept, the least recently used go first.
 */
const compiledCache = new Map<string, Compiled>();
const COMPILED_CACHE_MAX = 512;
/** How long a .gitignore must have been unchanged before its compiled form is kept, in ms. */
const SETTLED_MS = 2_000;

/**
 * The most `**` one pattern may hold and be used. The matcher's regular expressions backtrack:
 * a path is tried in about depth^(its `**`) ways, so three of them (`**`, `a`, `**`, `a`, `**`,
 * `b` joined by slashes) cost 50 ms on a path 200 folders deep, and ten run for hours, on the
 * thread that runs code search. Real patterns hold one or two; a pattern with more is not used
 * (it hides nothing, as a cut file's rest does not).
 */
export { MAX_GLOBSTARS };

/**
 * The .gitignore at `path` compiled, null when it is no regular file, or OVER_BUDGET when it
 * holds more than `room` patterns (then it is not compiled).
 */
async function readGitignore(
  path: string,
  room: number,
): Promise<Compiled | null | typeof OVER_BUDGET> {
  // Only a regular file: a symlinked .gitignore could point outside the workspace.
  const info = await lstatOrNull(path);
  if (!info?.isFile) return null;
  const key = `${info.dev}:${info.ino}:${info.size}:${info.mtime?.getTime() ?? "?"}`;
  const known = info.mtime === null ? undefined : compiledCache.get(key);
  if (known !== undefined) {
    if (known.patterns > room) return OVER_BUDGET;
    compiledCache.delete(key);
    compiledCache.set(key, known);
    return known;
  }
  // Opened without blocking and confirmed to be the file checked: a FIFO or a symlink
  // swapped in after the check would otherwise hang the walk (and every search waiting on
  // it), or be read.
  using file = openUnchanged(path, info);
  if (file === null) return null;
  const bytes = file.head(GITIGNORE_LIMITS.bytes);
  const text = new TextDecoder().decode(bytes);
  const lines = text.split(/\r?\n/, GITIGNORE_LIMITS.patterns + 1);
  // A cut file's last line may be cut too: it is dropped rather than read as a pattern.
  if (bytes.length === GITIGNORE_LIMITS.bytes || lines.length > GITIGNORE_LIMITS.patterns) {
    lines.pop();
  }
  const usable = lines.filter((line) => (line.match(/\*\*/g)?.length ?? 0) <= MAX_GLOBSTARS);
  const patterns = usable.filter((line) => line.trim() !== "" && !line.startsWith("#")).length;
  if (patterns > room) return OVER_BUDGET;
  const compiled = { matcher: ignore({ ignorecase: false }).add(usable), patterns };
  // A file changed within the modification time's resolution after this read would keep its
  // stamp: only a file unchanged for a while is kept (as git treats "racily clean" entries).
  if (info.mtime !== null && Date.now() - info.mtime.getTime() >= SETTLED_MS) {
    compiledCache.set(key, compiled);
    if (compiledCache.size > COMPILED_CACHE_MAX) {
      compiledCache.delete(compiledCache.keys().next().value!);
    }
  }
  return compiled;
}

/** One entry found by {@linkcode walk}. */
export interface WalkEntry {
  /** Absolute path. */
  path: string;
  name: string;
  isDirectory: boolean;
  isFile: boolean;
  isSymlink: boolean;
  /** 1 for entries of the starting folder. */
  depth: number;
}

/** Options for {@linkcode walk}. */
export interface WalkOptions {
  /** Deepest level to yield; default unlimited. */
  maxDepth?: number;
  /**
   * Most entries read of one folder; default unlimited. A folder's listing is read whole and
   * sorted before its first entry is yielded, so one of a million entries would stall a walk
   * that meant to stop at a deadline: past this, the rest of the folder is left out.
   */
  maxFolderEntries?: number;
  /** Told each folder below which the walk left something out: `depth` or `entries`. */
  onCut?: (dir: string, why: "depth" | "entries") => void;
  signal?: AbortSignal;
  /**
   * A `performance.now()` time past which the walk ends, checked at every entry (ignored ones
   * too) and before each folder is listed: the caller tells a walk cut short by it from one
   * done by the time.
   */
  deadline?: number;
}

/**
 * Yields the entries below folder `dir` depth first, each folder sorted by name in code-unit
 * order (as `rg --sort path`), skipping what `rules` ignores. Symlinks are yielded but never
 * followed. Folders below the start that cannot be read are skipped. The folders open on the
 * way down are kept on a stack of their own, not the call stack: a chain of folders thousands
 * deep (a command can make one) is walked to its end like any other.
 */
export async function* walk(
  dir: string,
  rules: IgnoreRules,
  options: WalkOptions = {},
): AsyncGenerator<WalkEntry> {
  const scoped = await rulesFor(dir, rules);
  const maxDepth = options.maxDepth ?? Infinity;
  const open = [await listFolder(dir, scoped, 1, options)];
  const deadline = options.deadline ?? Infinity;
  while (open.length > 0) {
    options.signal?.throwIfAborted();
    if (deadline !== Infinity && performance.now() >= deadline) return;
    const folder = open[open.length - 1];
    const entry = folder?.entries[folder.next++];
    if (folder === undefined || entry === undefined) {
      open.pop();
      continue;
    }
    const path = folder.base === undefined
      ? join(folder.dir, entry.name)
      : `${folder.base}/${entry.name}`;
    if (scoped.ignores(path, entry.isDirectory)) continue;
    yield { path, depth: folder.depth, ...entry };
    if (entry.isDirectory && folder.depth < maxDepth) {
      open.push(await listFolder(path, scoped, folder.depth + 1, options));
    } else if (entry.isDirectory) {
      options.onCut?.(path, "depth");
    }
  }
}

/**
 * The rules to apply below folder `dir`, loaded down to it. A folder that is itself ignored was
 * asked for by name, so its contents are shown, under its own .gitignore files only.
 */
export async function rulesFor(dir: string, rules: IgnoreRules): Promise<IgnoreRules> {
  await rules.loadAncestors(dir);
  if (!rules.ignores(dir, true)) return rules;
  const scoped = new IgnoreRules(dir);
  await scoped.load(dir);
  return scoped;
}

/** A folder being walked: its sorted entries and the next one to yield. */
interface OpenFolder {
  dir: string;
  /** `dir` when its entries' paths are `dir/name` as they stand (see isClean). */
  base: string | undefined;
  depth: number;
  entries: Deno.DirEntry[];
  next: number;
}

/**
 * The entries of folder `dir` at `depth`, sorted, its .gitignore loaded; undefined when a
 * folder below the start cannot be read.
 */
async function listFolder(
  dir: string,
  rules: IgnoreRules,
  depth: number,
  options: WalkOptions,
): Promise<OpenFolder | undefined> {
  options.signal?.throwIfAborted();
  const entries: Deno.DirEntry[] = [];
  const most = options.maxFolderEntries ?? Infinity;
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entries.length >= most) {
        options.onCut?.(dir, "entries");
        break;
      }
      entries.push(entry);
    }
  } catch (error) {
    if (depth === 1) throw error;
    return undefined;
  }
  // Its own .gitignore, known from the listing: no lookup in the many folders without one.
  await rules.loadListed(dir, entries);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  // A clean absolute folder's entries are the folder, "/" and the name: what join() gives,
  // without its normalising per entry.
  const base = isClean(dir) ? (dir === "/" ? "" : dir) : undefined;
  return { dir, base, depth, entries, next: 0 };
}

/** An absolute path join() would leave as it is: no empty, `.` or `..` part, no trailing `/`. */
function isClean(path: string): boolean {
  return path === "/" || (path.startsWith("/") && !UNCLEAN.test(path));
}

const UNCLEAN = /\/\/|\/\.\.?(?:\/|$)|\/$/;
