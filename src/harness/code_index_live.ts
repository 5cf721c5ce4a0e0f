/**
 * The code index as the agent's tools use it during a session (code_search, code_symbols): one
 * store kept open, brought up to date before each search within a time and file budget, and
 * re-checked cheaply after the agent's own changes. Loaded at the first search only.
 *
 * Freshness: a file whose lstat (mtime, size, inode) is what it was when this process last
 * matched it to the index is not read again; any other file is read, hashed and re-chunked when
 * its sha-256 changed. A whole walk runs at the first search, after a command or a tool that may
 * change any file ran, and when the last walk is older than `rewalkMs`; otherwise only the paths
 * the file tools wrote are checked.
 */
import { dirname, join, relative, resolve } from "../core/path.ts";
import { ToolError } from "../core/observation.ts";
import { generatedBy } from "../index/generated.ts";
import { type Hit, type RankWeights, withWeights } from "../index/rank.ts";
import type { SearchWeights } from "../config/types.ts";
import { IndexStore } from "../index/store.ts";
import { INDEX_FILE_MAX_CHUNKS } from "../index/chunker.ts";
import type {
  CodeIndexAccess,
  IndexAnswer,
  SymbolAnswer,
  SymbolQuestion,
} from "../tools/code_index_access.ts";
import { GITIGNORE_LIMITS, IgnoreRules, walk } from "../tools/ignore_rules.ts";
import type { PathTest } from "../sandbox/denied_paths.ts";
import {
  embeddingIdOf,
  INDEX_MAX_DEPTH,
  INDEX_MAX_FOLDER_ENTRIES,
  sha256,
  walkBounds,
} from "./code_index.ts";
import { INDEX_FILE_MAX_BYTES, readSafely } from "./code_index_file.ts";
import { answerSymbols, SYMBOL_QUESTION_BUDGET_MS } from "./code_symbols_query.ts";
import { ParserProcess } from "./code_index_parser.ts";
import { hiddenPrefixes, underPrefixes } from "./code_index_hidden.ts";

/** Files a refresh could not parse that its notes name, at most; the rest are counted. */
const UNPARSED_NOTES = 3;

/** Options of {@linkcode LiveCodeIndex}. */
export interface LiveIndexOptions {
  /** Absolute real path of the workspace. */
  workspace: string;
  /** The index file (`indexPath()`). */
  file: string;
  weights?: RankWeights;
  /** Longest a refresh before a search may take, in milliseconds (default 8,000). */
  budgetMs?: number;
  /** Most files one refresh reads (default 20,000); unchanged files by lstat are not read. */
  maxFiles?: number;
  /** A whole walk again when the last is older than this, in milliseconds (default 30,000). */
  rewalkMs?: number;
  /**
   * Absolute paths whose files are never indexed nor answered, as the sandbox hides them from
   * the file tools: the home folder's secret stores and tern's own home (keys, sessions).
   */
  hidden?: readonly string[];
  /**
   * What the person's deny rules hide now (a test of workspace-relative paths; undefined for
   * nothing), asked at each search: such a file is never indexed, one indexed before is removed
   * when a walk completes, and none is answered.
   */
  denied?: () => Promise<PathTest | undefined>;
  /**
   * Reads one workspace file (absolute path) for the index: its text, null when refused or
   * unreadable, undefined when gone. Default: in tern's process (`readSafely`). A session gives
   * the tool worker's read, confined in bubblewrap's view where commands can race nothing.
   */
  read?: (path: string) => Promise<string | null | undefined>;
}

/** What the last refresh did: files looked at, read (not skipped by lstat), re-chunked, removed. */
export interface RefreshCounts {
  checked: number;
  read: number;
  indexed: number;
  removed: number;
}

/** What one file's check found. */
type Outcome = "indexed" | "unchanged" | "skipped" | "gone";

/** How many walked files' reads run ahead of their checks (`#readAhead`). */
const READ_AHEAD = 16;
/** A read ahead that failed: the check reads the file again. */
const FAILED = Symbol("read failed");
type Failed = typeof FAILED;

/** A file's lstat stamp: it is read again only when this changed. */
function stampOf(info: Deno.FileInfo): string {
  return `${info.mtime?.getTime()}:${info.size}:${info.ino}`;
}

/** A SQLite busy or locked error (another process holds the lock past the busy timeout). */
export function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is (locked|busy)|SQLITE_BUSY|SQLITE_LOCKED/i
    .test(`${error.message} ${(error as { code?: string }).code ?? ""}`);
}

/** The code index of one workspace, kept up to date for the tools. */
export class LiveCodeIndex implements CodeIndexAccess {
  #options:
    & Required<Omit<LiveIndexOptions, "weights" | "denied" | "read">>
    & Pick<LiveIndexOptions, "weights" | "denied" | "read">;
  /** The hidden paths relative to the workspace; "" hides it all. */
  #hidden: string[];
  /** What the deny rules hid at the last refresh's start. */
  #denied: PathTest | undefined;
  #store: IndexStore | undefined;
  #notice: string | undefined;
  /** Per workspace-relative path, the lstat stamp of the file when it matched the index. */
  #stamps = new Map<string, string>();
  /**
   * The same for files found binary, generated, too large or refused, so a walk does not read
   * them again.
   */
  #skipped = new Map<string, string>();
  #walkedAt = -Infinity;
  #walkAll = true;
  #dirty = new Set<string>();
  #refreshing: Promise<string[]> | undefined;
  #counts: RefreshCounts = { checked: 0, read: 0, indexed: 0, removed: 0 };
  /** Where tree-sitter parses the files: a process of its own, killed when a parse runs away. */
  readonly #parser = new ParserProcess();
  /** Files the current refresh indexed as text windows because their parse failed, and why. */
  #unparsed: { path: string; why: string }[] = [];
  /** Files the current refresh indexed only up to a line (too many chunks), and that line. */
  #cutFiles: { path: string; atLine: number }[] = [];
  /** Files the current refresh did not store because the index holds its most chunks. */
  #full = 0;
  /**
   * Reads a walk started ahead of the file's check ({@linkcode READ_AHEAD}), with the lstat
   * stamp each was started at: a read through the tool worker costs a round trip, which then
   * runs while the files before it are hashed, parsed and stored.
   */
  #ahead = new Map<string, { stamp: string; text: Promise<string | null | undefined | Failed> }>();

  constructor(options: LiveIndexOptions) {
    this.#options = {
      budgetMs: 8_000,
      maxFiles: 20_000,
      rewalkMs: 30_000,
      hidden: [],
      ...options,
    };
    this.#hidden = hiddenPrefixes(options.workspace, this.#options.hidden);
  }

  /** True when the workspace-relative `path` is inside a hidden location or denied. */
  #isHidden(path: string): boolean {
    return underPrefixes(this.#hidden, path) || this.#denied?.(path) === true;
  }

  /** The ranking weights of the next searches. */
  set weights(weights: RankWeights | undefined) {
    this.#options.weights = weights;
  }

  /**
   * Notes files the agent changed: `paths` (absolute or workspace-relative) are checked before
   * the next search; without paths (a shell command ran) the next search walks the workspace.
   */
  markChanged(paths?: readonly string[]): void {
    if (paths === undefined) {
      this.#walkAll = true;
      return;
    }
    for (const path of paths) {
      const rel = relative(this.#options.workspace, resolve(this.#options.workspace, path));
      if (rel !== "" && !rel.startsWith("..")) this.#dirty.add(rel);
    }
  }

  /** Whether the index's vectors are the local embedding's (or it has none yet). */
  #localVectors(store: IndexStore): boolean {
    const id = store.embeddingId();
    return id === undefined || id === embeddingIdOf(undefined);
  }

  async search(
    query: string,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<Hit>> {
    const notes = await this.refresh(options.signal);
    const store = this.#open();
    // An index `tern index` built may hold hidden files: they are never answered.
    // Vectors an endpoint made (`indexEmbeddings`) are not comparable with a local query vector:
    // then the ranking goes without the vector signal (an empty query vector).
    const queryVector = this.#localVectors(store) ? undefined : new Float32Array(0);
    const results = readOrExplain(() =>
      store.search(query, {
        limit: options.limit + 10,
        weights: this.#options.weights,
        queryVector,
      })
    ).filter((hit) => !this.#isHidden(hit.chunk.path));
    return { results: await this.#stillThere(results, options.limit), notes };
  }

  async symbols(
    name: string,
    question: SymbolQuestion,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<SymbolAnswer>> {
    const notes = await this.refresh(options.signal);
    const store = this.#open();
    const { answers, partial } = readOrExplain(() =>
      answerSymbols(store, name, question, options.limit + 10)
    );
    const results = answers.filter((answer) => !this.#isHidden(answer.chunk.path));
    if (partial) {
      notes.push(
        `the answer is partial: looking it up took longer than ${
          SYMBOL_QUESTION_BUDGET_MS / 1000
        } s, so it holds only what was found by then`,
      );
    }
    return { results: await this.#stillThere(results, options.limit), notes };
  }

  /**
   * The first `limit` of `results` whose file is still a file of the workspace (by lstat): a
   * file deleted since the last whole walk is not answered, even while walks are cut short.
   */
  async #stillThere<T extends { chunk: { path: string } }>(
    results: T[],
    limit: number,
  ): Promise<T[]> {
    const kept: T[] = [];
    const present = new Map<string, boolean>();
    for (const result of results) {
      if (kept.length >= limit) break;
      const path = result.chunk.path;
      if (!present.has(path)) {
        const info = await Deno.lstat(join(this.#options.workspace, path)).catch(() => null);
        present.set(path, info?.isFile === true);
      }
      if (present.get(path)) kept.push(result);
    }
    return kept;
  }

  /**
   * Brings the index up to date within the budget; returns notes on what the results may miss.
   * Concurrent calls share one refresh.
   */
  async refresh(signal: AbortSignal): Promise<string[]> {
    for (;;) {
      this.#refreshing ??= this.#refresh(signal).finally(() => this.#refreshing = undefined);
      try {
        return await this.#refreshing;
      } catch (error) {
        // Another caller's refresh was cancelled: this one, not cancelled, starts its own.
        if (signal.aborted || !(error instanceof DOMException && error.name === "AbortError")) {
          throw error;
        }
      }
    }
  }

  /** What the last refresh did. */
  get lastRefresh(): Readonly<RefreshCounts> {
    return this.#counts;
  }

  /**
   * Closes the store and ends the parser process; the next call opens and starts them again.
   * The returned promise settles once the process has ended.
   */
  close(): Promise<void> {
    this.#store?.close();
    this.#store = undefined;
    return this.#parser.close();
  }

  #open(): IndexStore {
    if (this.#store !== undefined) return this.#store;
    const { file } = this.#options;
    try {
      Deno.mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const { store, notice } = IndexStore.open(file);
      this.#store = store;
      this.#notice = notice;
      return store;
    } catch (error) {
      if (isBusy(error) || isBusy((error as { cause?: unknown }).cause)) {
        throw new ToolError(
          "EXECUTION_FAILED",
          "Cannot open the code index: another process has held it locked for 10 s; try again " +
            "shortly",
        );
      }
      const detail = error instanceof Error ? error.message.split("\n")[0] : String(error);
      const message = detail.startsWith("Cannot open the code index")
        ? detail
        : `Cannot open the code index "${file}": ${detail}`;
      throw new ToolError("EXECUTION_FAILED", message);
    }
  }

  async #refresh(signal: AbortSignal): Promise<string[]> {
    this.#denied = await this.#options.denied?.();
    const store = this.#open();
    const notes: string[] = [];
    if (this.#notice !== undefined) notes.push(this.#notice);
    this.#notice = undefined;
    this.#counts = { checked: 0, read: 0, indexed: 0, removed: 0 };
    this.#unparsed = [];
    this.#cutFiles = [];
    this.#full = 0;
    const lock = tryLock(`${this.#options.file}.lock`);
    if (lock === undefined) {
      notes.push(
        "another tern process is updating the code index: the results may miss its latest " +
          "changes; search again shortly for them",
      );
      return notes;
    }
    try {
      const stale = this.#walkAll ||
        performance.now() - this.#walkedAt > this.#options.rewalkMs;
      const cut = stale ? await this.#walk(store, signal) : await this.#checkDirty(store);
      if (cut !== undefined) notes.push(cut);
    } catch (error) {
      // Cancelled, busy or failed part way: the next search walks again.
      this.#walkAll = true;
      if (!isBusy(error)) throw error;
      notes.push(
        "another process holds the code index locked: the results may miss recent changes; " +
          "search again shortly for them",
      );
    } finally {
      lock.close();
    }
    return [...notes, ...unparsedNotes(this.#unparsed), ...this.#sizeNotes()];
  }

  /** Checks only the paths the file tools changed. */
  async #checkDirty(store: IndexStore): Promise<string | undefined> {
    const known = store.fileHashes();
    const rules = new IgnoreRules(this.#options.workspace);
    for (const path of [...this.#dirty]) {
      const abs = join(this.#options.workspace, path);
      await rules.loadAncestors(dirname(abs));
      const outcome = this.#isHidden(path) || rules.ignores(abs, false) || !(await isPlainPath(abs))
        ? "skipped"
        : await this.#check(store, path, known, true);
      if (outcome === "skipped" || outcome === "gone") this.#forget(store, path, known);
      this.#dirty.delete(path);
    }
    return undefined;
  }

  /** Walks the whole workspace; returns a note when the budget cut it short. */
  async #walk(store: IndexStore, signal: AbortSignal): Promise<string | undefined> {
    const { workspace, budgetMs, maxFiles } = this.#options;
    const deadline = performance.now() + budgetMs;
    const known = store.fileHashes();
    const present = new Set<string>();
    const counts = this.#counts;
    let cut: "time" | "files" | undefined;
    this.#walkAll = false;
    const cutShort: string[] = [];
    const bounds = walkBounds(workspace, (path) => cutShort.push(path));
    const rules = new IgnoreRules(workspace);
    // The walk ends itself at the deadline, also among entries it never yields (ignored ones).
    const entries = walk(workspace, rules, { signal, deadline, ...bounds });
    // The files walked but not checked yet, their reads started (when the worker reads).
    const queue: string[] = [];
    let walked = false;
    try {
      for (;;) {
        while (!walked && queue.length < READ_AHEAD) {
          // Every entry, of whatever kind: folders and links never reach the queue.
          signal.throwIfAborted();
          if (performance.now() >= deadline) {
            cut = "time";
            break;
          }
          const next = await entries.next();
          if (next.done) {
            walked = true;
            // Ended by the deadline rather than at the last entry: not a whole walk.
            if (performance.now() >= deadline) cut = "time";
            break;
          }
          const entry = next.value;
          if (!entry.isFile || entry.isSymlink) continue;
          const path = relative(workspace, entry.path).split("\\").join("/");
          if (this.#isHidden(path)) continue;
          queue.push(path);
          this.#readAhead(path, known);
        }
        if (cut !== undefined) break;
        const path = queue.shift();
        if (path === undefined) break;
        if (performance.now() >= deadline) cut = "time";
        else if (counts.read >= maxFiles) cut = "files";
        if (cut !== undefined) break;
        const outcome = await this.#check(store, path, known, this.#dirty.has(path));
        this.#dirty.delete(path);
        if (outcome === "indexed" || outcome === "unchanged") present.add(path);
      }
    } finally {
      await entries.return(undefined);
      // Reads started for files the walk did not reach are not waited for.
      this.#ahead.clear();
    }
    const partly = leftOutNote(
      cutShort,
      rules.overBudget.map((dir) => relative(workspace, dir) || "."),
    );
    if (cut === undefined) {
      for (const path of known.keys()) if (!present.has(path)) this.#forget(store, path, known);
      this.#walkedAt = performance.now();
      return partly === "" ? undefined : `the code index is incomplete${partly}`;
    }
    // The next search goes on walking; files checked now are not read again unless changed.
    this.#walkAll = true;
    const why = cut === "time"
      ? `the ${budgetMs / 1000} s time budget of one search`
      : `the budget of ${maxFiles} files read per search`;
    return `the code index is incomplete: the refresh stopped after ${counts.checked} files at ${why}; ` +
      `files not reached yet may be missing or out of date, and the next search continues${partly}`;
  }

  /** Brings one file's entry up to date. */
  async #check(
    store: IndexStore,
    path: string,
    known: Map<string, string>,
    force: boolean,
  ): Promise<Outcome> {
    const abs = join(this.#options.workspace, path);
    this.#counts.checked++;
    const info = await Deno.lstat(abs).catch(() => null);
    if (info === null || !info.isFile) {
      this.#stamps.delete(path);
      return "gone";
    }
    const stamp = stampOf(info);
    const kept = force ? undefined : this.#kept(path, stamp, known);
    if (kept !== undefined) return kept;
    this.#stamps.delete(path);
    this.#skipped.delete(path);
    if (info.size > INDEX_FILE_MAX_BYTES) return "skipped";
    this.#counts.read++;
    const ahead = this.#ahead.get(path);
    this.#ahead.delete(path);
    const early = ahead?.stamp === stamp ? await ahead.text : FAILED;
    const text = this.#options.read === undefined
      ? readSafely(this.#options.workspace, abs)
      : early === FAILED
      ? await this.#options.read(abs)
      : early;
    if (
      typeof text !== "string" || text.length > INDEX_FILE_MAX_BYTES || text.includes("\0") ||
      generatedBy(path, text) !== undefined
    ) {
      if (text !== undefined) this.#skipped.set(path, stamp);
      return "skipped";
    }
    let outcome: Outcome = "unchanged";
    if (known.get(path) !== await sha256(text)) {
      const chunked = await this.#parser.chunk(path, text);
      if (chunked.unparsed !== undefined) this.#unparsed.push({ path, why: chunked.unparsed });
      // An index of an endpoint's vectors gets none for this file rather than local ones.
      const none = this.#localVectors(store)
        ? undefined
        : chunked.chunks.map(() => new Float32Array(0));
      if (!store.replaceFile(chunked, undefined, none)) {
        this.#full++;
        known.delete(path);
        return "skipped";
      }
      if (chunked.cutAtLine !== undefined) {
        this.#cutFiles.push({ path, atLine: chunked.cutAtLine });
      }
      this.#counts.indexed++;
      known.set(path, chunked.hash);
      outcome = "indexed";
    }
    this.#stamps.set(path, stamp);
    return outcome;
  }

  /**
   * Starts the read of `path` through `read` when its check would read it (not unchanged or
   * skipped by its lstat stamp, not too large): the check then takes that read if the stamp is
   * still the same. Nothing without `read` (reading in this process costs no round trip).
   */
  #readAhead(path: string, known: Map<string, string>): void {
    const read = this.#options.read;
    if (read === undefined) return;
    const abs = join(this.#options.workspace, path);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(abs);
    } catch {
      return;
    }
    if (!info.isFile || info.size > INDEX_FILE_MAX_BYTES) return;
    const stamp = stampOf(info);
    if (!this.#dirty.has(path) && this.#kept(path, stamp, known) !== undefined) return;
    // A read that failed is made again by the check (and one never checked is never awaited).
    this.#ahead.set(path, { stamp, text: read(abs).catch((): Failed => FAILED) });
  }

  /**
   * What a file whose lstat stamp is `stamp` stays without being read: "unchanged" when it
   * matched the index at that stamp, "skipped" when it was found unfit for it; else undefined.
   */
  #kept(path: string, stamp: string, known: Map<string, string>): Outcome | undefined {
    if (known.has(path) && this.#stamps.get(path) === stamp) return "unchanged";
    if (this.#skipped.get(path) === stamp) return "skipped";
    return undefined;
  }

  /** Notes on files the index holds only part of, or not at all, for its size bounds. */
  #sizeNotes(): string[] {
    const notes = this.#cutFiles.slice(0, UNPARSED_NOTES).map(({ path, atLine }) =>
      `${JSON.stringify(path)} is indexed only in part: from line ${atLine} on it is left out ` +
      `(one file makes at most ${INDEX_FILE_MAX_CHUNKS} chunks)`
    );
    const more = this.#cutFiles.length - UNPARSED_NOTES;
    if (more > 0) notes.push(`${more} more file(s) are indexed only in part`);
    if (this.#full > 0) {
      notes.push(
        `the code index holds its most chunks: ${this.#full} file(s) were not indexed, and ` +
          "searches miss them",
      );
    }
    return notes;
  }

  #forget(store: IndexStore, path: string, known: Map<string, string>): void {
    this.#stamps.delete(path);
    if (!known.has(path)) return;
    store.removeFile(path);
    this.#counts.removed++;
    known.delete(path);
  }
}

/**
 * `; it leaves out …` for the folders a walk left out: `cutShort` by its bounds, `overBudget`
 * because their .gitignore files came past the patterns one walk uses; "" for none.
 */
function leftOutNote(cutShort: string[], overBudget: string[]): string {
  const named = (paths: string[]) =>
    paths.slice(0, 3).map((path) => JSON.stringify(path)).join(", ") +
    (paths.length > 3 ? ` and ${paths.length - 3} more folders` : "");
  let note = "";
  if (cutShort.length > 0) {
    note += `; it leaves out part of ${named(cutShort)} (folders deeper than ` +
      `${INDEX_MAX_DEPTH} levels, or past ${INDEX_MAX_FOLDER_ENTRIES} entries of one folder)`;
  }
  if (overBudget.length > 0) {
    note += `; it leaves out ${named(overBudget)} (their .gitignore files came past the ` +
      `${GITIGNORE_LIMITS.totalPatterns} patterns one walk uses)`;
  }
  return note;
}

/**
 * What the results miss of the files a refresh could not parse: a note naming each (the first
 * {@link UNPARSED_NOTES}), and one counting the others.
 */
function unparsedNotes(unparsed: { path: string; why: string }[]): string[] {
  const notes = unparsed.slice(0, UNPARSED_NOTES).map(({ path, why }) =>
    `${JSON.stringify(path)} could not be parsed (${why}): it is indexed as plain text, without ` +
    "its symbols"
  );
  const more = unparsed.length - UNPARSED_NOTES;
  if (more > 0) notes.push(`${more} more file(s) could not be parsed and are indexed as text`);
  return notes;
}

/** True when no part of `abs` below the filesystem root is a symlink (its real path is itself). */
async function isPlainPath(abs: string): Promise<boolean> {
  try {
    return await Deno.realPath(abs) === abs;
  } catch {
    return false;
  }
}

/** Config's `searchWeights` over the defaults; undefined (the defaults) when none are set. */
export function rankWeights(weights: SearchWeights | undefined): RankWeights | undefined {
  return weights === undefined ? undefined : withWeights(weights);
}

/** An exclusive advisory lock on `path` (created), or undefined when another holder has it. */
export function tryLock(path: string): Deno.FsFile | undefined {
  const handle = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
  try {
    if (handle.tryLockSync(true)) return handle;
  } catch {
    // A filesystem without locks: go on without one (writes still take SQLite's lock).
    return handle;
  }
  handle.close();
  return undefined;
}

/** Runs a read of the index; a lock held past the busy timeout becomes a clear retry. */
function readOrExplain<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!isBusy(error)) throw error;
    throw new ToolError(
      "EXECUTION_FAILED",
      "Cannot read the code index: another process has held it locked for 10 s; try again shortly",
    );
  }
}
