/**
 * The code index of a workspace (issue 22) composed from its parts: the tools' walker and
 * .gitignore rules find the files, the verified workspace reader reads them, the chunker cuts
 * them and the store keeps them. The index file lives under tern's home, keyed by workspace,
 * never inside the repository, which could otherwise plant a crafted database.
 */
import { dirname, join, relative } from "../core/path.ts";
import { shownUrl } from "../core/url_text.ts";
import { sha256 } from "../index/chunker.ts";
import { IndexPool } from "./code_index_pool.ts";
import { ParserProcess } from "./code_index_parser.ts";
import {
  type FileRequest,
  type FileResult,
  INDEX_FILE_MAX_BYTES,
  prepareIndexFile,
} from "./code_index_file.ts";

/** The sha-256 of a text as the chunker stores it (for the agent's index tools). */
export { sha256 };
import {
  embeddingText,
  type FileStamp,
  IndexStore,
  type KnownFile,
  type SkippedFile,
} from "../index/store.ts";
import { type EmbeddingEndpoint, embedTexts } from "../index/remote_embed.ts";
import { EMBEDDING_DIMENSIONS } from "../index/embed.ts";
import type { TernConfig } from "../config/schema.ts";
import { encodeCwd } from "../session/paths.ts";
import { IgnoreRules, walk } from "../tools/ignore_rules.ts";
import { isInside } from "../tools/paths.ts";
import { IndexError } from "../index/errors.ts";

export { INDEX_FILE_MAX_BYTES, readSafely } from "./code_index_file.ts";

/**
 * Writes share one transaction up to this many files or this long (ms), whichever comes first:
 * fewer commits, and another process's writer never waits long for the lock.
 */
const BATCH_FILES = 256;
const BATCH_MS = 1_000;

/** A full run with up to this many files to chunk does it in its own thread, without workers. */
const IN_THREAD_FILES = 8;
/** Files sent to each index worker and not yet answered: more are prepared here instead. */
const QUEUED_PER_THREAD = 32;
/**
 * Files prepared (here or by a worker) and not yet written: they are written in the order they
 * were found, so one slow file holds those after it; past this many this thread waits for it.
 */
const UNWRITTEN_MAX = 256;
/** Results written per file found, at most, while files are still being found. */
const SETTLED_PER_FILE = 2;

/**
 * A stamp younger than this (ms) is not trusted: a second write within the file system's time
 * granularity could keep the time and the size and change the content.
 */
const RACY_MS = 2_000;

/**
 * The embedding endpoint the person configured (`indexEmbeddings`, their own config only), with
 * its key from the variable it names; undefined for the default local embedding.
 */
export function embeddingEndpointOf(config: TernConfig): EmbeddingEndpoint | undefined {
  const settings = config.indexEmbeddings;
  if (!settings) return undefined;
  const apiKey = settings.apiKeyEnv ? config.apiKeys[settings.apiKeyEnv] : undefined;
  return {
    baseUrl: settings.baseUrl,
    model: settings.model,
    ...(apiKey ? { apiKey } : {}),
    ...(settings.batchSize ? { batchSize: settings.batchSize } : {}),
  };
}

/**
 * The query's vector from `endpoint` (cached in `store`), or undefined for the local one; an
 * empty vector (no embedding signal) when the index was built with another embedding.
 */
export async function queryVectorOf(
  endpoint: EmbeddingEndpoint | undefined,
  store: IndexStore,
  query: string,
): Promise<Float32Array | undefined> {
  if (store.embeddingId() !== embeddingIdOf(endpoint)) return new Float32Array(0);
  return endpoint ? (await embedTexts(endpoint, [query], store))[0] : undefined;
}

/** Names the embedding of the index's vectors: the local one, or an endpoint's model. */
export function embeddingIdOf(endpoint: EmbeddingEndpoint | undefined): string {
  return endpoint
    ? `endpoint ${shownUrl(endpoint.baseUrl)} ${endpoint.model}`
    : `local hashed n-grams ${EMBEDDING_DIMENSIONS}`;
}

/** Where the index of `workspace` (an absolute real path) lives: `<ternHome>/index/<key>.sqlite`. */
export function indexPath(ternHome: string, workspace: string): string {
  return join(ternHome, "index", `${encodeCwd(workspace)}.sqlite`);
}

/** What one {@linkcode indexWorkspace} did. */
export interface IndexSummary {
  /** Files chunked and stored because they are new or changed. */
  indexed: number;
  unchanged: number;
  removed: number;
  /** Files skipped because they hold a NUL byte. */
  binary: number;
  /** Files skipped because a tool made them from other files (index/generated.ts). */
  generated: number;
  /** Files skipped because they exceed {@linkcode INDEX_FILE_MAX_BYTES}. */
  tooLarge: number;
  /** Files refused by the workspace reader (a symlink out, hard links, not regular). */
  refused: number;
  /** Chunks written for the indexed files. */
  chunks: number;
  /**
   * Files not stored because the index holds its most chunks (`maxChunks`, default
   * `INDEX_MAX_CHUNKS` of index/store.ts): it stops growing rather than fill the disk.
   */
  full: number;
  /**
   * Files indexed only up to a line (the first 100): they made more than
   * `INDEX_FILE_MAX_CHUNKS` (index/chunker.ts) chunks; `atLine` is the first line left out.
   */
  cutFiles: { path: string; atLine: number }[];
  /**
   * Source files stored as line windows because their parse failed or ran out of time or
   * memory (see code_index_parser.ts), and why.
   */
  unparsed: { path: string; why: string }[];
  /**
   * Folders whose contents were left out (workspace-relative): deeper than
   * {@linkcode INDEX_MAX_DEPTH}, past {@linkcode INDEX_MAX_FOLDER_ENTRIES} entries, or whose
   * .gitignore came past the patterns one walk uses (`GITIGNORE_LIMITS.totalPatterns`).
   */
  cut: { path: string; why: "depth" | "entries" | "patterns" }[];
  /** The store's one-line notice when it rebuilt a corrupt or foreign file. */
  notice?: string;
}

/** Options of {@linkcode indexWorkspace}. */
export interface IndexOptions {
  /** Told the workspace-relative path of each file as it is looked at. */
  onFile?: (path: string, seen: number) => void;
  signal?: AbortSignal;
  /** Chunk embeddings from this endpoint (cached in the index) instead of the local one. */
  embeddings?: EmbeddingEndpoint;
  /**
   * Index worker threads for a run with many files to chunk, beside this thread (default: one
   * per core but one, 1 to 4: `defaultThreads()`); 0 prepares everything in this thread.
   */
  threads?: number;
  /** The most chunks the index holds (default `INDEX_MAX_CHUNKS` of index/store.ts). */
  maxChunks?: number;
  /**
   * Workspace-relative paths left out as if they were not there, and removed when stored
   * (what the sandbox and the person's deny rules hide: `indexHidden` of code_index_tools.ts).
   */
  skip?: (path: string) => boolean;
}

/**
 * The deepest folder level the index walks: a repository's chain of folders thousands deep made
 * each file's checks cost in proportion to its depth squared (the real path of every level).
 */
export const INDEX_MAX_DEPTH = 64;

/**
 * The most entries the index reads of one folder: a folder of a million files (one command
 * makes it) was listed whole before its first file, past any search's time budget.
 */
export const INDEX_MAX_FOLDER_ENTRIES = 10_000;

/**
 * The index's walk bounds for `workspace`, telling `cut` each workspace-relative folder left
 * out (see {@linkcode INDEX_MAX_DEPTH}, {@linkcode INDEX_MAX_FOLDER_ENTRIES}).
 */
export function walkBounds(
  workspace: string,
  cut: (path: string, why: "depth" | "entries") => void,
): {
  maxDepth: number;
  maxFolderEntries: number;
  onCut: (dir: string, why: "depth" | "entries") => void;
} {
  return {
    maxDepth: INDEX_MAX_DEPTH,
    maxFolderEntries: INDEX_MAX_FOLDER_ENTRIES,
    onCut: (dir, why) => cut(relative(workspace, dir).split("\\").join("/") || ".", why),
  };
}

/**
 * Brings the index at `file` up to date with `workspace` (absolute real path): walks it under
 * its .gitignore files without following symlinks, re-chunks only files whose sha-256 changed
 * and removes files no longer present. Binary, generated, too large and refused files are
 * counted, not stored (a file that became one of them is removed).
 */
export async function indexWorkspace(
  workspace: string,
  file: string,
  options: IndexOptions = {},
): Promise<IndexSummary> {
  return await withIndex(file, options, async (run) => {
    const { store, summary } = run;
    const parser = new ParserProcess();
    const fileOptions = { ...options, workspaceIsReal: isRealPath(workspace), parser };
    const known = store.knownFiles();
    const skipped = store.skippedFiles();
    const prefix = workspace.endsWith("/") ? workspace : `${workspace}/`;
    const present = new Set<string>();
    const stillSkipped = new Set<string>();
    let seen = 0;
    const settled = (path: string, outcome: Outcome) => {
      if (outcome === "indexed" || outcome === "unchanged") present.add(path);
      if (outcome === "binary" || outcome === "generated") stillSkipped.add(path);
    };
    const chunker = new Chunker(options, settled, parser);
    try {
      const bounds = walkBounds(workspace, (path, why) => {
        if (summary.cut.length < 100) summary.cut.push({ path, why });
      });
      const rules = new IgnoreRules(workspace);
      const walked = walk(workspace, rules, { ...options, ...bounds });
      for await (const entry of walked) {
        // Symlinks are never followed: a link may lead anywhere, also out of the workspace.
        if (!entry.isFile || entry.isSymlink) continue;
        // The walk's paths start with the workspace: cut, not path.relative() (per file, it shows).
        const path = entry.path.startsWith(prefix)
          ? entry.path.slice(prefix.length)
          : relative(workspace, entry.path).split("\\").join("/");
        if (options.skip?.(path)) continue;
        options.onFile?.(path, ++seen);
        const file = { path, absolute: entry.path };
        const before = { known: known.get(path), skipped: skipped.get(path) };
        const outcome = await indexFile(run, workspace, file, before, fileOptions, chunker);
        if (outcome !== "pending") settled(path, outcome);
      }
      await chunker.finish();
      for (const dir of rules.overBudget.slice(0, Math.max(0, 100 - summary.cut.length))) {
        summary.cut.push({ path: relative(workspace, dir) || ".", why: "patterns" });
      }
    } finally {
      chunker.close();
      await parser.close();
    }
    for (const path of known.keys()) {
      if (present.has(path)) continue;
      run.write(() => store.removeFile(path));
      summary.removed++;
    }
    for (const path of skipped.keys()) {
      if (!stillSkipped.has(path) && !present.has(path)) run.write(() => store.unskipFile(path));
    }
  }, true);
}

/**
 * Brings the index at `file` up to date for `paths` only (workspace-relative, `/`-separated):
 * the files the agent's own edits or commands changed, without walking the workspace. Each is
 * what a full run would make of it: re-chunked when its content changed, removed when it is
 * gone, ignored by a .gitignore, or no longer indexable (binary, generated, too large, refused).
 */
export async function refreshFiles(
  workspace: string,
  file: string,
  paths: string[],
  options: Pick<IndexOptions, "embeddings" | "maxChunks"> = {},
): Promise<IndexSummary> {
  return await withIndex(file, options, async (run) => {
    const parser = new ParserProcess();
    const fileOptions = { ...options, workspaceIsReal: isRealPath(workspace), parser };
    try {
      await refreshEach(run, workspace, paths, fileOptions);
    } finally {
      await parser.close();
    }
  });
}

/** refreshFiles() of each of `paths`. */
async function refreshEach(
  run: Run,
  workspace: string,
  paths: string[],
  fileOptions: FileOptions,
): Promise<void> {
  const { store, summary } = run;
  const rules = new IgnoreRules(workspace);
  for (const path of new Set(paths)) {
    const absolute = join(workspace, path);
    if (!isInside(workspace, absolute) || absolute === workspace) continue;
    await rules.loadAncestors(dirname(absolute));
    const before = { known: store.knownFile(path), skipped: store.skippedFile(path) };
    const outcome = rules.ignores(absolute, false)
      ? "gone"
      : await indexFile(run, workspace, { path, absolute }, before, fileOptions);
    if (outcome !== "indexed" && outcome !== "unchanged" && before.known !== undefined) {
      run.write(() => store.removeFile(path));
      summary.removed++;
    }
    const skippedNow = outcome === "binary" || outcome === "generated";
    if (before.skipped !== undefined && !skippedNow && outcome !== "indexed") {
      run.write(() => store.unskipFile(path));
    }
  }
}

/**
 * How a run reads its files: `workspaceIsReal`, its workspace is its own real path; `parser`,
 * the parser process of this thread.
 */
type FileOptions = Pick<IndexOptions, "embeddings"> & {
  workspaceIsReal: boolean;
  parser: ParserProcess;
};

/**
 * Whether `path` is its own real path, looked up once per run: then no file's read resolves it
 * again (readWorkspaceText's `workspaceIsReal`).
 */
function isRealPath(path: string): boolean {
  try {
    return Deno.realPathSync(path) === path;
  } catch {
    return false;
  }
}

/** What became of one file. */
type Outcome =
  | "indexed"
  | "unchanged"
  | "gone"
  | "binary"
  | "generated"
  | "tooLarge"
  | "refused"
  | "full";

/** One run over the index. */
interface Run {
  store: IndexStore;
  summary: IndexSummary;
  /** Runs one file's write in the current batch, starting one when none is open. */
  write(action: () => void): void;
  /** Commits the open batch, if any: before waiting on something slow (a network call). */
  pause(): void;
}

/**
 * Opens the index, runs `body` in batches of writes (`bulk`: with the store's bulk settings),
 * and turns SQLite failures into one line.
 */
async function withIndex(
  file: string,
  { embeddings, maxChunks }: Pick<IndexOptions, "embeddings" | "maxChunks">,
  body: (run: Run) => Promise<void>,
  bulk = false,
): Promise<IndexSummary> {
  const { store, notice } = await openIndex(file, maxChunks);
  const summary: IndexSummary = {
    indexed: 0,
    unchanged: 0,
    removed: 0,
    binary: 0,
    generated: 0,
    tooLarge: 0,
    refused: 0,
    chunks: 0,
    full: 0,
    cutFiles: [],
    unparsed: [],
    cut: [],
  };
  if (notice !== undefined) summary.notice = notice;
  // The write lock is taken at the first write, not for a run that changes nothing.
  let inBatch = 0;
  let since = 0;
  const pause = () => {
    if (inBatch === 0) return;
    inBatch = 0;
    store.commitBatch();
  };
  const write = (action: () => void) => {
    if (inBatch === 0) {
      store.beginBatch();
      since = performance.now();
    }
    action();
    if (++inBatch >= BATCH_FILES || performance.now() - since > BATCH_MS) pause();
  };
  try {
    // Another embedding than the stored vectors': everything is indexed again.
    const embedding = embeddingIdOf(embeddings);
    if (store.embeddingId() !== embedding) store.resetEmbedding(embedding);
    if (bulk) store.beginBulk();
    await body({ store, summary, write, pause });
    pause();
    // The settings are the connection's own: a run that failed needs no endBulk().
    if (bulk) store.endBulk();
    return summary;
  } catch (error) {
    if (!isSqliteError(error)) throw error;
    throw new IndexError(
      `Cannot write the code index "${file}": ${firstLine(error)}. It keeps the files ` +
        `written before; ${fixOf(file)}, then index again`,
      { cause: error },
    );
  } finally {
    store.close();
  }
}

/** What the index holds of a file before a run: indexed (its hash), or read and skipped. */
interface Before {
  known: KnownFile | undefined;
  skipped: SkippedFile | undefined;
}

/**
 * Indexes the file at workspace-relative `path` (`absolute`: the same inside `workspace`) unless
 * its stamp or content is as `before`; counts the outcome in the run's summary. With a
 * `chunker` the file may be read and chunked later: "pending", and `settled` is told its
 * outcome then; otherwise the outcome.
 */
async function indexFile(
  run: Run,
  workspace: string,
  file: { path: string; absolute: string },
  { known: before, skipped }: Before,
  options: FileOptions,
  chunker?: Chunker,
): Promise<Outcome | "pending"> {
  const info = lstatOrNull(file.absolute);
  // Symlinks are never followed: a link may lead anywhere, also out of the workspace.
  if (info === null || !info.isFile) return "gone";
  if (info.size > INDEX_FILE_MAX_BYTES) return count(run, "tooLarge");
  const stamp = stampOf(info);
  // Unchanged since its hash was taken, or since it was read and skipped: not read again.
  if (stamp.mtime !== null && sameStamp(before?.stamp, stamp)) return count(run, "unchanged");
  if (stamp.mtime !== null && sameStamp(skipped?.stamp, stamp)) return count(run, skipped!.reason);
  const request: FileRequest = {
    workspace,
    workspaceIsReal: options.workspaceIsReal,
    path: file.path,
    absolute: file.absolute,
    vectors: !options.embeddings,
    ...(before ? { knownHash: before.hash } : {}),
  };
  const settle = (result: FileResult) => settleFile(run, request, stamp, before, result, options);
  if (chunker) {
    await chunker.add(request, settle);
    return "pending";
  }
  return await settle(await prepareIndexFile(request, options.parser));
}

function count(run: Run, outcome: Exclude<Outcome, "gone">): Outcome {
  run.summary[outcome]++;
  return outcome;
}

/** Stores (or stamps, or counts) what became of one file; its outcome. */
async function settleFile(
  run: Run,
  request: FileRequest,
  stamp: FileStamp,
  before: KnownFile | undefined,
  result: FileResult,
  options: Pick<IndexOptions, "embeddings">,
): Promise<Outcome> {
  if ("notStored" in result) {
    const why = result.notStored;
    if (why === "binary" || why === "generated") {
      run.write(() => run.store.skipFile(request.path, why, stamp));
    }
    return why === "gone" ? "gone" : count(run, why);
  }
  if ("unchanged" in result) {
    if (!sameStamp(before?.stamp, stamp)) {
      run.write(() => run.store.stampFile(request.path, stamp));
    }
    return count(run, "unchanged");
  }
  const { store, summary, write, pause } = run;
  const { prepared } = result;
  const { chunks, unparsed, cutAtLine } = prepared.chunked;
  if (unparsed !== undefined) summary.unparsed.push({ path: request.path, why: unparsed });
  let vectors: Float32Array[] | undefined;
  if (options.embeddings) {
    // No lock is held while the endpoint answers.
    pause();
    vectors = await embedTexts(options.embeddings, chunks.map(embeddingText), store);
  }
  let stored = true;
  write(() => stored = store.writePrepared(prepared, stamp, vectors));
  if (!stored) return count(run, "full");
  if (cutAtLine !== undefined && summary.cutFiles.length < 100) {
    summary.cutFiles.push({ path: request.path, atLine: cutAtLine });
  }
  summary.chunks += chunks.length;
  return count(run, "indexed");
}

/**
 * Reads and chunks the files of a full run: in this thread when few need it, else in index
 * workers (code_index_pool.ts), which start once more than {@link IN_THREAD_FILES} do (a run
 * that changes a file or two starts no thread). While the workers have
 * {@link QUEUED_PER_THREAD} files each waiting, this thread prepares the next file itself.
 * Results are written in the order the files were found; at most {@link UNWRITTEN_MAX} wait.
 */
class Chunker {
  #pool: IndexPool | undefined;
  #noPool: boolean;
  /** Files waiting for the decision: this thread (few files) or workers (many). */
  #held: Held[] = [];
  /** Files sent or prepared, settled in this order. */
  #inFlight: InFlight[] = [];

  /** `parser`: the parser process of the files prepared in this thread. */
  constructor(
    readonly options: Pick<IndexOptions, "threads">,
    readonly settled: (path: string, outcome: Outcome) => void,
    readonly parser: ParserProcess,
  ) {
    this.#noPool = options.threads === 0;
  }

  /** Prepares the file `request` names, then `settle`s it (and tells `settled`). */
  async add(
    request: FileRequest,
    settle: (result: FileResult) => Promise<Outcome>,
  ): Promise<void> {
    const held = { request, settle };
    if (this.#noPool) return await this.#here(held);
    if (!this.#pool) {
      this.#held.push(held);
      if (this.#held.length <= IN_THREAD_FILES) return;
      try {
        this.#pool = IndexPool.start(this.options.threads);
      } catch {
        // No thread could start (a build without the worker's module): prepared here instead.
        this.#noPool = true;
        return await this.#drainHeld();
      }
      for (const each of this.#held.splice(0)) await this.#dispatch(each);
    } else await this.#dispatch(held);
  }

  /** Settles every file still held or in flight. */
  async finish(): Promise<void> {
    await this.#drainHeld();
    while (this.#inFlight.length > 0) await this.#settleOldest();
  }

  /** Ends the workers; files not settled are dropped. */
  close(): void {
    this.#pool?.close();
    this.#held = [];
    this.#inFlight = [];
  }

  /**
   * Sends the file to a worker, or prepares it here while the workers have enough waiting (this
   * thread is otherwise idle between writes); then settles what is ready.
   */
  async #dispatch(held: Held): Promise<void> {
    const pool = this.#pool!;
    let flight: InFlight;
    if (pool.waiting >= QUEUED_PER_THREAD * pool.threads) {
      const result = await prepareIndexFile(held.request, this.parser).catch(asError);
      flight = { ...held, done: true, result: Promise.resolve(result) };
    } else {
      flight = { ...held, done: false, result: pool.prepare(held.request).catch(asError) };
      // The result never rejects (asError): this only marks it ready.
      void flight.result.then(() => flight.done = true);
    }
    this.#inFlight.push(flight);
    // A few writes per file found, not all that are ready: the workers must not run dry while
    // this thread writes a long run of results.
    for (let i = 0; i < SETTLED_PER_FILE && this.#inFlight[0]?.done; i++) {
      await this.#settleOldest();
    }
    while (this.#inFlight.length > UNWRITTEN_MAX) await this.#settleOldest();
  }

  async #drainHeld(): Promise<void> {
    for (const held of this.#held.splice(0)) await this.#here(held);
  }

  async #here({ request, settle }: Held): Promise<void> {
    this.settled(request.path, await settle(await prepareIndexFile(request, this.parser)));
  }

  async #settleOldest(): Promise<void> {
    const { result, settle, request } = this.#inFlight.shift()!;
    const outcome = await result;
    if (outcome instanceof Error) throw outcome;
    this.settled(request.path, await settle(outcome));
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** A file sent to a worker or prepared here, not yet settled. */
interface InFlight extends Held {
  result: Promise<FileResult | Error>;
  /** Its result is there. */
  done: boolean;
}

/** A file a full run found to prepare, and what to do with the result. */
interface Held {
  request: FileRequest;
  settle: (result: FileResult) => Promise<Outcome>;
}

/**
 * The store at `file`, its folder created first. Throws `Cannot create the code index …` naming
 * the file and the fix when the folder or the file cannot be made (a read-only home).
 */
async function openIndex(
  file: string,
  maxChunks: number | undefined,
): Promise<ReturnType<typeof IndexStore.open>> {
  try {
    await Deno.mkdir(dirname(file), { recursive: true, mode: 0o700 });
    return IndexStore.open(file, { maxChunks });
  } catch (error) {
    throw cannotCreateIndex(file, error);
  }
}

/** `Cannot create the code index "<file>": <why>; <the fix>`, for a folder or file not made. */
export function cannotCreateIndex(file: string, error: unknown): IndexError {
  const detail = firstLine(error).replace(/^Cannot open the code index "[^"]*": /, "");
  return new IndexError(`Cannot create the code index "${file}": ${detail}; ${fixOf(file)}`, {
    cause: error,
  });
}

function fixOf(file: string): string {
  return `make "${dirname(file)}" writable with free space, or set TERN_HOME to a folder that ` +
    "is (the index lives in <TERN_HOME>/index)";
}

function isSqliteError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_SQLITE");
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}

/** The stamp of a file as lstat saw it; a recent modification time is not trusted. */
function stampOf(info: Deno.FileInfo): FileStamp {
  const mtime = info.mtime?.getTime() ?? null;
  return {
    mtime: mtime === null || Date.now() - mtime < RACY_MS ? null : mtime,
    size: info.size,
  };
}

function sameStamp(a: FileStamp | undefined, b: FileStamp): boolean {
  return a !== undefined && a.mtime === b.mtime && a.size === b.size;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}
