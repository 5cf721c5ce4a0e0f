/**
 * A content-addressed store of workspace snapshots: a git object store of tern's own (under the
 * session folder, never in the project) with one index per session, so a snapshot re-reads only
 * the files whose stat data changed. git runs isolated (`runGit`'s `isolated`): it reads neither
 * the project's repository nor any global or system config, its own config names no hook,
 * fsmonitor or driver, and its `info/attributes` switches off every filter, text conversion and
 * encoding a project's `.gitattributes` could ask for. The project's `.gitignore` files apply, and
 * a snapshot given the paths the person's deny rules hide never reads one of them (see
 * {@linkcode ShadowStore.snapshot}).
 * The commands that read the workspace run where bubblewrap shows them only the workspace, the
 * store and the system's programs (confined_git.ts): a folder swapped for a link to outside
 * while they run leads nowhere. One that runs {@linkcode FIFO_CHECK_MS} has the workspace
 * searched for FIFOs git would wait on (git_fifos.ts); found ones stop it, and it runs again
 * with them released, as every later command does while they are there.
 */
import { join, relative } from "../../core/path.ts";
import { TernError } from "../../core/errors.ts";
import { type GitResult, runGit } from "../hardened_git.ts";
import type { PathTest } from "../../sandbox/denied_paths.ts";
import { runWorkspaceGit, type WorkspaceGitOptions } from "./confined_git.ts";
import { after } from "../../core/timer.ts";
import { FIFO_CHECK_MS, findGitFifos, isFifo, MAX_FIFOS } from "./git_fifos.ts";

/** Options of {@linkcode ShadowStore.open}. */
export interface ShadowStoreOptions {
  /** The session's index is `<gitDir>/index-<name>`. */
  indexName: string;
  /** Files larger than this (bytes) are left out of snapshots and reported. */
  maxFileBytes: number;
  /** `PATH` for git (default: this process's, else /usr/bin:/bin). */
  path?: string;
  /** Milliseconds each git command may take (default 30,000). */
  timeoutMs?: number;
  /**
   * An index of this object's own instead of the session's, so a broken session index (a lock
   * a killed git left, a damaged file) cannot fail its snapshots: a copy of the session's
   * (`"copy"`) or none (`"empty"`: every file is read). {@linkcode ShadowStore.discard}
   * removes it.
   */
  throwawayIndex?: "copy" | "empty";
  /**
   * Most files one snapshot reads (default {@linkcode DEFAULT_MAX_FILES}, the `rewindMaxFiles`
   * setting): past it the snapshot fails.
   */
  maxFiles?: number;
  /**
   * Most files one git command stores (default {@linkcode UPDATE_STEP}): a snapshot reading
   * more stores them in steps.
   */
  stepFiles?: number;
  /** Most bytes one snapshot reads (default 2 GiB): past it the snapshot fails. */
  maxBytes?: number;
  /**
   * Most bytes the whole store may hold (default {@linkcode MAX_STORE_BYTES}): a snapshot that
   * could take it past that fails. Nothing is ever pruned from a store, and every snapshot's
   * new contents stay in it, kept or not.
   */
  maxStoreBytes?: number;
}

/** The default of the `rewindMaxFiles` setting: most files one snapshot reads. */
export const DEFAULT_MAX_FILES = 100_000;

/**
 * Files one git command stores. A snapshot reading more (the first of a large workspace) stores
 * them in steps, each kept in the index as it ends: no command runs near its timeout, and a
 * snapshot that fails partway (its timeout, a killed process) leaves what it stored, so the next
 * one reads only the rest.
 */
const UPDATE_STEP = 10_000;

/**
 * Repositories nested in the workspace that one snapshot (or one look for ignored files) lists,
 * each with git runs of its own in the store's view: past it, the checkpoint fails rather than
 * holding the turn for minutes (a hundred took ten seconds here, and a command can make
 * thousands with `git init`).
 */
export const MAX_NESTED_REPOSITORIES = 64;

/** The error when more than {@linkcode MAX_NESTED_REPOSITORIES} repositories are nested. */
function tooManyNested(what: string): TernError {
  return new TernError(
    `Cannot ${what}: more than ${MAX_NESTED_REPOSITORIES} repositories are nested in the ` +
      "workspace (each is listed on its own); ignore the ones tern need not keep (.gitignore), " +
      "or start tern in a folder with fewer",
  );
}

/** Files looked at (lstat) between two yields to the event loop: keys and screen stay live. */
const LSTATS_PER_YIELD = 1_000;

/**
 * The largest a workspace's checkpoint store grows (4 GiB): snapshots past it fail, so a build
 * that rewrites large files on every call cannot fill the disk with copies of them.
 */
export const MAX_STORE_BYTES = 4 * 2 ** 30;

/** A snapshot of the workspace. */
export interface Snapshot {
  /** The git tree id of the workspace as it was on disk. */
  tree: string;
  /** Paths (relative) left out because they were larger than the limit. */
  skipped: string[];
  /**
   * Paths left out because git cannot store them as named (see {@linkcode unstorable}), as
   * shown (a name that is not UTF-8 with U+FFFD for its bad bytes). A rewind neither restores
   * nor removes them. Absent when there are none.
   */
  unstorable?: string[];
}

/** One path that differs between two trees. */
export interface TreeChange {
  path: string;
  /** added: only in the second tree; deleted: only in the first; type: file ↔ symlink. */
  status: "added" | "modified" | "deleted" | "type";
  /** git modes ("100644", "100755", "120000"; "000000" when absent). */
  oldMode: string;
  newMode: string;
  oldId: string;
  newId: string;
}

/** The empty tree of a SHA-1 repository. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const CONFIG = `[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tprecomposeunicode = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\thooksPath = /dev/null
\tattributesFile = /dev/null
\texcludesFile = /dev/null
\tuntrackedCache = false
\tsplitIndex = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
`;
/**
 * Highest precedence of all attribute sources: no filter, conversion or encoding, ever; and no
 * diff setting (`!diff`: git tells binary files by their content), so a project's `* binary` or
 * `-diff` cannot hide what a rewind would change behind "Binary files differ".
 */
const ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !diff\n";
const TREE_ID = /^[0-9a-f]{40}$/;
/** The commands that take the index's lock. */
const LOCKING = new Set(["update-index", "write-tree"]);
/** The FIFOs git would wait on found in the workspace (NUL-separated absolute paths). */
const FIFOS_FILE = "fifos";
/** Blobs read by one `git cat-file --batch`. */
const BLOB_BATCH = 256;
/** Blob sizes asked for by one `git cat-file --batch-check`. */
const SIZE_BATCH = 4096;
/** Session indexes kept in a store (the newest); see `#seedIndex`. */
const KEPT_INDEXES = 16;
const STATUS: Record<string, TreeChange["status"]> = {
  A: "added",
  D: "deleted",
  M: "modified",
  T: "type",
};
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A throwaway index's name starts so, then the time it was made (ms) and a random id. */
const THROWAWAY_PREFIX = "throwaway-index-";
const THROWAWAY_NAME = /^throwaway-index-(\d{1,15})-[0-9a-f-]+(?:\.lock)?$/;
/** A throwaway index older than this was left by a killed process. */
export const THROWAWAY_STALE_MS = 60 * 60 * 1000;

/** See the module comment. */
export class ShadowStore {
  readonly gitDir: string;
  readonly workspace: string;
  readonly #options: ShadowStoreOptions;
  readonly #index: string;
  #last: Snapshot | undefined;
  /** The `hidden` test whose paths this object took out of the index already. */
  #cleanedFor: PathTest | undefined;
  /** What the store holds, in bytes: measured at the first snapshot, then counted up. */
  #stored: number | undefined;
  /** FIFOs git would wait on, found so far (absolute paths; git_fifos.ts). */
  #fifos: string[] = [];
  /** Stops the git commands of the snapshot under way (`snapshot`'s `signal`). */
  #signal: AbortSignal | undefined;

  private constructor(gitDir: string, workspace: string, options: ShadowStoreOptions) {
    this.gitDir = gitDir;
    this.workspace = workspace;
    this.#options = options;
    this.#index = options.throwawayIndex === undefined
      ? join(gitDir, `index-${options.indexName}`)
      : join(gitDir, `${THROWAWAY_PREFIX}${Date.now()}-${crypto.randomUUID()}`);
  }

  /**
   * Opens (creating when needed) the store at `gitDir` for `workspace` (an absolute real path).
   * A new session's index starts as a copy of the newest one there, so its first snapshot
   * re-reads only what changed since another session's.
   * @throws {TernError} when git cannot be started or fails.
   */
  static async open(
    gitDir: string,
    workspace: string,
    options: ShadowStoreOptions,
  ): Promise<ShadowStore> {
    if (!/^[A-Za-z0-9._-]+$/.test(options.indexName)) {
      throw new TypeError(
        `Cannot open the checkpoint store: bad index name "${options.indexName}"`,
      );
    }
    const store = new ShadowStore(gitDir, workspace, options);
    await store.#init();
    return store;
  }

  async #init(): Promise<void> {
    const config = join(this.gitDir, "config");
    // Synchronous, like the seeding below: a store that exists opens in one step, not one
    // event-loop turn per file call behind whatever else loads then (the first snapshot of a
    // turn waits for it).
    const ready = readTextOrNull(config) === CONFIG;
    if (!ready) {
      await Deno.mkdir(this.gitDir, { recursive: true, mode: 0o700 });
      await this.#git(["init", "--quiet"]);
      await Deno.mkdir(join(this.gitDir, "info"), { recursive: true });
      await Deno.writeTextFile(join(this.gitDir, "info", "attributes"), ATTRIBUTES);
      await Deno.writeTextFile(join(this.gitDir, "info", "exclude"), this.#excludes());
      // Written last and whole: a store whose config is ours is a finished one.
      const scratch = `${config}.${crypto.randomUUID()}`;
      await Deno.writeTextFile(scratch, CONFIG);
      await Deno.rename(scratch, config);
      await Deno.remove(join(this.gitDir, "hooks"), { recursive: true }).catch(() => {});
    }
    // A store made before the attributes last changed gets them now.
    const attributes = join(this.gitDir, "info", "attributes");
    if (ready && readTextOrNull(attributes) !== ATTRIBUTES) {
      await Deno.writeTextFile(attributes, ATTRIBUTES);
    }
    // A lock no live command holds (its git was killed along with a tern process) would fail
    // every later command on the index.
    if (this.#staleLock(`${this.#index}.lock`)) this.#dropLock("");
    if (this.#options.throwawayIndex === undefined) this.#seedIndex();
    else {
      this.#sweepThrowaways();
      this.#copyIndex(this.#options.throwawayIndex);
    }
    // FIFOs an earlier process found: its next command need not wait to find them again.
    const fifos = readTextOrNull(join(this.gitDir, FIFOS_FILE));
    this.#fifos = (fifos ?? "").split("\0").filter((path) =>
      path !== "" && !relative(this.workspace, path).startsWith("..")
    );
  }

  /** The store itself, when it lies inside the workspace (`TERN_HOME` there): never snapshotted. */
  #excludes(): string {
    const inside = relative(this.workspace, join(this.gitDir, ".."));
    if (inside.startsWith("..") || inside === "" || inside.startsWith("/")) return "";
    return `/${inside.replace(/[\\*?[\]!#\s]/g, (c) => `\\${c}`)}/\n`;
  }

  /**
   * The throwaway index: a copy of the session's (not its lock; the copy keeps its times, as
   * git trusts stat data only for files older than the index), or none for `"empty"`.
   */
  #copyIndex(kind: "copy" | "empty"): void {
    if (kind === "empty") return;
    const session = join(this.gitDir, `index-${this.#options.indexName}`);
    try {
      const info = Deno.lstatSync(session);
      if (!info.isFile || !info.mtime) return;
      Deno.copyFileSync(session, this.#index);
      Deno.utimeSync(this.#index, info.atime ?? info.mtime, info.mtime);
    } catch {
      // None: the snapshot reads every file.
    }
  }

  /**
   * Removes the throwaway indexes (and their locks) that a killed tern left: those made more
   * than {@linkcode THROWAWAY_STALE_MS} ago, by the time in their names (a copy keeps its
   * source's times, so the file's own say nothing). One operation holds its index for seconds.
   */
  #sweepThrowaways(): void {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(this.gitDir)];
    } catch {
      return;
    }
    const now = Date.now();
    for (const entry of entries) {
      const made = THROWAWAY_NAME.exec(entry.name);
      if (!entry.isFile || made === null || now - Number(made[1]) < THROWAWAY_STALE_MS) continue;
      try {
        Deno.removeSync(join(this.gitDir, entry.name));
      } catch {
        // Gone already.
      }
    }
  }

  /** Removes a throwaway index (and its lock); nothing for a session's own. Never throws. */
  discard(): void {
    if (this.#options.throwawayIndex === undefined) return;
    for (const path of [this.#index, `${this.#index}.lock`]) {
      try {
        Deno.removeSync(path);
      } catch {
        // None.
      }
    }
  }

  #seedIndex(): void {
    if (existsNoFollow(this.#index)) return;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(this.gitDir)];
    } catch {
      return;
    }
    const indexes: { path: string; mtime: Date; atime: Date | null }[] = [];
    for (const entry of entries) {
      // A `.lock` is a live git command's: never touched.
      if (!entry.isFile || !entry.name.startsWith("index-") || entry.name.endsWith(".lock")) {
        continue;
      }
      const path = join(this.gitDir, entry.name);
      try {
        const info = Deno.statSync(path);
        if (info.mtime) indexes.push({ path, mtime: info.mtime, atime: info.atime });
      } catch {
        // Gone meanwhile.
      }
    }
    indexes.sort((a, b) => b.mtime.getTime() - a.mtime.getTime());
    // Every session leaves an index, and an index is only a cache of stat data (any one gives
    // the same snapshots, only faster or slower): all but the newest few go, so neither this
    // opening nor the store's size grows with the sessions the workspace has had.
    for (const old of indexes.slice(KEPT_INDEXES)) {
      try {
        Deno.removeSync(old.path);
      } catch {
        // Gone meanwhile.
      }
    }
    // The newest that holds entries: one a run left empty (it ended before its first snapshot)
    // would make this session's first snapshot read every file of the workspace again.
    const newest = indexes.slice(0, KEPT_INDEXES).find((index) => indexEntries(index.path) > 0);
    if (!newest) return;
    // The copy keeps the original's time: git trusts stat data only for files older than it.
    const scratch = `${this.#index}.${crypto.randomUUID()}`;
    try {
      Deno.copyFileSync(newest.path, scratch);
      Deno.utimeSync(scratch, newest.atime ?? newest.mtime, newest.mtime);
      Deno.renameSync(scratch, this.#index);
    } catch {
      try {
        Deno.removeSync(scratch);
      } catch {
        // Never made.
      }
    }
  }

  /**
   * Stores the workspace as it is on disk (tracked by this store or not ignored by the
   * project's `.gitignore`) and returns its tree. Only files whose stat data changed since the
   * last snapshot are read. Symlinks are stored as links, never followed; nested repositories
   * are left out. A path `hidden` is true for (the person's deny rules hide it from every tool)
   * is never read, and leaves the index when it is there (stored before the rule): no snapshot
   * holds it. Once `signal` aborts, its git commands are stopped and it rejects; the index keeps
   * only what it stored whole (it is a cache). `extra`: paths stored although ignored (a
   * rewind's, from {@linkcode ignoredSince}). @throws {TernError} when git fails.
   */
  async snapshot(
    hidden?: PathTest,
    signal?: AbortSignal,
    extra: readonly string[] = [],
  ): Promise<Snapshot> {
    this.#signal = signal;
    // The first snapshot of this store object has no tree to reuse: the index's tree is
    // written while the workspace is listed (the index only changes if something is listed,
    // after this ended), so an unchanged workspace costs one git command's wait, not two.
    // git re-reads a racily clean file as it writes the index, and `.gitattributes` with it.
    const early = this.#last === undefined
      ? this.#git(["write-tree"], { readsWorkspace: "attributes" }).then((result) =>
        this.#treeOf(result)
      )
        .catch((error) => error as Error)
      : undefined;
    try {
      const snapshot = await this.#snapshot(early, hidden, extra);
      this.#cleanedFor = hidden;
      return snapshot;
    } finally {
      // Never left running: the next git command on the index may need its lock.
      await early;
      this.#signal = undefined;
    }
  }

  async #snapshot(
    early: Promise<string | Error> | undefined,
    hidden: PathTest | undefined,
    extra: readonly string[],
  ): Promise<Snapshot> {
    // The first snapshot of this store object (`early`) also looks for files the project tracks
    // although an ignore pattern matches them: beside the listing, which leaves them out.
    const forced = early === undefined ? undefined : this.#trackedIgnored();
    const listed = await this.#git(
      ["ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard", "--", "."],
      { maxBytes: 256 * 1024 * 1024, readsWorkspace: true },
    );
    if (listed.truncated) {
      throw new TernError("Cannot checkpoint the workspace: it lists more than 256 MiB of names");
    }
    const [names, unstorable] = storable(listed.stdout);
    const candidates = names.filter((path) => !path.endsWith("/"));
    // A folder holding a repository of its own is listed as one name ("sub/"), none of its
    // files: they are the workspace's all the same, and a command's changes there must be in
    // the checkpoint for a rewind to restore them.
    // Those the store tracks already are in the listing above when they changed.
    const folders = names.filter((path) => path.endsWith("/"));
    // Told before any is listed: those nested in them are counted as they are found.
    if (folders.length > MAX_NESTED_REPOSITORIES) throw tooManyNested("checkpoint the workspace");
    const nested = { count: 0 };
    for (const folder of folders) {
      const tracked = await this.#git(["ls-files", "-z", "--cached", "--", folder], {
        maxBytes: 256 * 1024 * 1024,
      });
      const known = new Set(nulList(tracked.stdout));
      const files = await this.#nestedFiles(folder.slice(0, -1), 1, nested);
      candidates.push(...files.filter((path) => !known.has(path)));
    }
    const tracked = await forced;
    if (tracked !== undefined && tracked.length > 0) {
      // Once in the store's index, a later listing names them when they change.
      const stored = await this.#git(["ls-files", "-z", "--cached"], {
        maxBytes: 256 * 1024 * 1024,
      });
      const known = new Set([...nulList(stored.stdout), ...names]);
      candidates.push(...tracked.filter((path) => !known.has(path)));
    }
    const listedNow = new Set(candidates);
    candidates.push(...extra.filter((path) => !listedNow.has(path)));
    const update: string[] = [];
    const drop: string[] = [];
    const skipped: string[] = [];
    // What the index holds of them (unchanged files are not listed above): once per test.
    if (hidden !== undefined && hidden !== this.#cleanedFor) {
      const tracked = await this.#git(["ls-files", "-z", "--cached"], {
        maxBytes: 256 * 1024 * 1024,
      });
      drop.push(...new Set(nulList(tracked.stdout).filter(hidden)));
    }
    const realFolder = realFolders(this.workspace);
    let reading = 0;
    let looked = 0;
    for (const path of candidates) {
      if (++looked % LSTATS_PER_YIELD === 0) {
        await new Promise((done) => setTimeout(done, 0));
        this.#signal?.throwIfAborted();
      }
      // Listed again each time while untracked: left alone (a hidden tracked one is dropped).
      if (hidden?.(path)) continue;
      // Below a symlink or a file: gone from the workspace (and never stat'ed through the link).
      if (!realFolder(path)) {
        drop.push(path);
        continue;
      }
      let info: Deno.FileInfo;
      try {
        info = Deno.lstatSync(join(this.workspace, path));
      } catch {
        update.push(path);
        continue;
      }
      // A FIFO, socket or device is no file git can store: as good as gone.
      if (info.isDirectory || (!info.isFile && !info.isSymlink)) drop.push(path);
      else if (info.isFile && info.size > this.#options.maxFileBytes) skipped.push(path);
      else {
        update.push(path);
        reading += info.size;
      }
    }
    const maxFiles = this.#options.maxFiles ?? DEFAULT_MAX_FILES;
    if (update.length > maxFiles) {
      throw new TernError(
        `Cannot checkpoint the workspace: ${update.length} files changed since the last ` +
          `checkpoint, more than ${maxFiles} (the rewindMaxFiles setting; rewindMaxFileBytes ` +
          `0 turns checkpoints off)`,
      );
    }
    if (reading > (this.#options.maxBytes ?? 2 ** 31)) {
      throw new TernError(
        `Cannot checkpoint the workspace: ${reading} bytes changed since the last checkpoint, ` +
          `more than ${this.#options.maxBytes ?? 2 ** 31}`,
      );
    }
    const last = this.#last;
    const knownSkips = last !== undefined && skipped.every((path) => last.skipped.includes(path));
    if (update.length === 0 && drop.length === 0 && knownSkips && last !== undefined) {
      return withUnstorable({ tree: last.tree, skipped }, unstorable);
    }
    if (early !== undefined) {
      const tree = await early;
      if (update.length === 0 && drop.length === 0 && skipped.length === 0) {
        if (tree instanceof Error) throw tree;
        this.#last = { tree, skipped };
        return withUnstorable(this.#last, unstorable);
      }
    }
    if (reading > 0) await this.#reserve(reading);
    const step = this.#options.stepFiles ?? UPDATE_STEP;
    for (let at = 0; at < update.length; at += step) {
      // --replace: a folder that became a file or link (or the reverse) replaces its entries.
      await this.#git(["update-index", "-z", "--add", "--remove", "--replace", "--stdin"], {
        input: nulJoin(update.slice(at, at + step)),
        readsWorkspace: true,
      });
    }
    if (drop.length + skipped.length > 0) {
      await this.#git(["update-index", "-z", "--force-remove", "--stdin"], {
        input: nulJoin([...drop, ...skipped]),
        readsWorkspace: "attributes",
      });
    }
    const tree = this.#treeOf(await this.#git(["write-tree"], { readsWorkspace: "attributes" }));
    this.#last = { tree, skipped };
    return withUnstorable(this.#last, unstorable);
  }

  /**
   * Counts `bytes` more into the store (at most what a snapshot reading them adds: git
   * compresses, and content it holds already adds nothing).
   * @throws {TernError} when that could take the store past its limit.
   */
  async #reserve(bytes: number): Promise<void> {
    const most = this.#options.maxStoreBytes ?? MAX_STORE_BYTES;
    this.#stored ??= await this.#storedBytes();
    if (this.#stored + bytes > most) {
      const gib = (n: number) =>
        n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`;
      throw new TernError(
        `Cannot checkpoint the workspace: its checkpoint store holds ${gib(this.#stored)}, and ` +
          `the ${gib(bytes)} changed since the last checkpoint could take it past ` +
          `${gib(most)}; remove "${this.gitDir}" to start it afresh (earlier checkpoints are ` +
          "then gone)",
      );
    }
    this.#stored += bytes;
  }

  /** The bytes of the store's objects, loose and packed (`git count-objects -v`). */
  async #storedBytes(): Promise<number> {
    const text = decoder.decode((await this.#git(["count-objects", "-v"])).stdout);
    const kib = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    return (kib("size") + kib("size-pack") + kib("size-garbage")) * 1024;
  }

  #treeOf(result: GitResult): string {
    const tree = decoder.decode(result.stdout).trim();
    if (!TREE_ID.test(tree)) {
      throw new TernError(`Cannot checkpoint the workspace: git write-tree printed "${tree}"`);
    }
    return tree;
  }

  /**
   * The files of the repository nested at `folder` (relative), by its own ignore files, as
   * paths relative to the workspace: listed by the store's git over that folder with an empty
   * index, so the nested repository's config and hooks play no part. Its `.git` is left out;
   * repositories nested deeper are listed the same way, eight levels at most.
   */
  async #nestedFiles(
    folder: string,
    depth: number,
    nested: { count: number },
  ): Promise<string[]> {
    if (depth > 8 || folder.split("/").includes(".git")) return [];
    if (++nested.count > MAX_NESTED_REPOSITORIES) throw tooManyNested("checkpoint the workspace");
    const workTree = join(this.workspace, folder);
    const args = ["ls-files", "-z", "--others", "--exclude-standard", "--", "."];
    const result = await this.#workspaceGit(args, {
      cwd: workTree,
      env: { PATH: this.#options.path ?? readPath() },
      isolated: { gitDir: this.gitDir, workTree },
      workspace: this.workspace,
      indexFile: join(this.gitDir, `nested-${crypto.randomUUID()}.absent`),
      maxBytes: 256 * 1024 * 1024,
      timeoutMs: this.#options.timeoutMs ?? 30_000,
    });
    if (result === undefined || result.code !== 0 || result.truncated) {
      throw new TernError(
        `Cannot checkpoint the workspace: cannot list the repository nested at "${folder}"`,
      );
    }
    const files: string[] = [];
    for (const name of nulList(result.stdout)) {
      if (name.endsWith("/")) {
        files.push(
          ...await this.#nestedFiles(`${folder}/${name.slice(0, -1)}`, depth + 1, nested),
        );
      } else files.push(`${folder}/${name}`);
    }
    return files;
  }

  /**
   * The files the project's own index (`.git/index` at the workspace's top) holds that an ignore
   * pattern matches (added with `git add -f`): project files the store's listing leaves out.
   * Listed in the store's view from that index, never written; plain relative paths only. Empty
   * without such an index, or when git cannot read it (a split or sparse index). Never throws.
   */
  async #trackedIgnored(): Promise<string[]> {
    const index = join(this.workspace, ".git", "index");
    try {
      if (!Deno.lstatSync(join(this.workspace, ".git")).isDirectory) return [];
      if (!Deno.lstatSync(index).isFile) return [];
    } catch {
      return [];
    }
    const args = ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"];
    const result = await this.#workspaceGit(args, {
      cwd: this.workspace,
      env: { PATH: this.#options.path ?? readPath() },
      isolated: { gitDir: this.gitDir, workTree: this.workspace },
      workspace: this.workspace,
      indexFile: index,
      maxBytes: 64 * 1024 * 1024,
      timeoutMs: this.#options.timeoutMs ?? 30_000,
    }).catch(() => undefined);
    if (result === undefined || result.code !== 0 || result.truncated) return [];
    return [...new Set(nulList(result.stdout))].filter(plainPath);
  }

  /**
   * The files on disk that the workspace's ignore files hide now but `tree`'s own `.gitignore`
   * files do not: made since `tree`, behind a rule written since (a turn that makes
   * `conftest.py` and a `.gitignore` line for it), so no checkpoint holds them. A folder ignored
   * whole both now and then (`node_modules/`) is not entered.
   */
  async ignoredSince(tree: string): Promise<string[]> {
    // Listed from an empty index, not the session's (a damaged one must not block a rewind): a
    // tracked file listed too is on disk all the same. `repo`: the workspace (""), or a
    // repository nested in it ("sub/"), listed by its own ignore files as the snapshot does.
    const list = async (repo: string, args: string[]): Promise<string[]> => {
      const workTree = join(this.workspace, repo);
      const result = await this.#workspaceGit(["ls-files", "-z", "--others", ...args], {
        cwd: workTree,
        env: { PATH: this.#options.path ?? readPath() },
        isolated: { gitDir: this.gitDir, workTree },
        workspace: this.workspace,
        indexFile: join(this.gitDir, `ignored-${crypto.randomUUID()}.absent`),
        maxBytes: 256 * 1024 * 1024,
        timeoutMs: this.#options.timeoutMs ?? 30_000,
      });
      if (result === undefined || result.code !== 0 || result.truncated) {
        throw new TernError("Cannot check the workspace's ignored files: git ls-files failed");
      }
      return storable(result.stdout)[0].map((path) => repo + path)
        .filter((path) => plainPath(path.replace(/\/$/, "")));
    };
    const ignored = ["--ignored", "--exclude-standard"];
    const now: Array<[repo: string, path: string]> = [];
    // The workspace's own, and those nested in it.
    let seen = 0;
    for (let repos = [""], depth = 0; repos.length > 0 && depth <= 8; depth++) {
      const next: string[] = [];
      if ((seen += repos.length) > MAX_NESTED_REPOSITORIES + 1) {
        throw tooManyNested("check the workspace's ignored files");
      }
      for (const repo of repos) {
        for (const path of await list(repo, [...ignored, "--directory"])) now.push([repo, path]);
        // A folder holding a repository of its own is listed as one name ("sub/").
        next.push(...(await list(repo, ["--exclude-standard"])).filter((p) => p.endsWith("/")));
      }
      repos = next;
    }
    const then = new Set(await this.ignoredBy(tree, now.map(([, path]) => path)));
    const files = new Set<string>();
    const most = this.#options.maxFiles ?? DEFAULT_MAX_FILES;
    for (const [repo, name] of now.filter(([, name]) => !then.has(name))) {
      const found = name.endsWith("/")
        ? await list(repo, [...ignored, "--", name.slice(repo.length)])
        : [name];
      for (const path of found) if (!path.endsWith("/")) files.add(path);
      // A snapshot holding them would fail past this anyway: no scratch file is made for each.
      if (files.size > most) {
        throw new TernError(
          `Cannot checkpoint the workspace: more than ${most} files are ignored now that the ` +
            "checkpoint's own .gitignore files do not ignore (the rewindMaxFiles setting)",
        );
      }
    }
    const stillIgnored = new Set(await this.ignoredBy(tree, [...files]));
    return [...files].filter((path) => !stillIgnored.has(path));
  }

  /**
   * Those of `paths` that `tree`'s own `.gitignore` files (and this store's excludes) ignore:
   * files that may have been in the workspace, unseen, when `tree` was taken. A path ending in
   * `/` is a folder, ignored when the folder is as a whole.
   */
  async ignoredBy(tree: string, paths: readonly string[]): Promise<string[]> {
    if (paths.length === 0) return [];
    const listed = await this.#git(["ls-tree", "-r", "-z", tree], { maxBytes: 256 * 1024 * 1024 });
    // The ignore files, and an empty file for each path, in a scratch work tree of their own.
    const scratch = await Deno.makeTempDir({ prefix: "tern-ignore-" });
    try {
      const make = async (path: string, bytes: Uint8Array) => {
        await Deno.mkdir(join(scratch, path, ".."), { recursive: true });
        await Deno.writeFile(join(scratch, path), bytes, { createNew: true });
      };
      for (const record of nulList(listed.stdout)) {
        const [, id, path] = record.match(/^100(?:644|755) blob ([0-9a-f]{40})\t(.+)$/s) ?? [];
        if (path === ".gitignore" || path?.endsWith("/.gitignore")) {
          await make(path, await this.blob(id));
        }
      }
      // One that cannot be laid out (a file of the tree in its way) counts as not ignored.
      for (const path of paths) {
        const file = path.endsWith("/") ? `${path}${SCRATCH_NAME}` : path;
        await make(file, new Uint8Array()).catch(() => {});
      }
      // A folder ignored whole is listed as one name ending in "/", not entered.
      const args = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"];
      const result = await runGit(args, {
        cwd: scratch,
        env: { PATH: this.#options.path ?? readPath() },
        isolated: { gitDir: this.gitDir, workTree: scratch },
        indexFile: join(this.gitDir, `ignore-${crypto.randomUUID()}.absent`),
        maxBytes: 256 * 1024 * 1024,
        timeoutMs: this.#options.timeoutMs ?? 30_000,
      });
      if (result === undefined || result.timedOut || result.code !== 0 || result.truncated) {
        const detail = result?.stderr.split("\n", 1)[0] || "git failed";
        throw new TernError(`Cannot check the checkpoint's ignored files: ${detail}`);
      }
      // git lists a folder whose files are all ignored too, then each of them: only a folder
      // listed with nothing below it is ignored whole.
      const names = new Set(nulList(result.stdout));
      const entered = new Set(
        [...names].flatMap((name) => folders(name.replace(/\/$/, "")).slice(0, -1)),
      );
      const whole = (folder: string) => names.has(folder) && !entered.has(folder);
      return paths.filter((path) =>
        (path.endsWith("/") ? whole(path) : names.has(path)) ||
        folders(path.replace(/\/$/, "")).slice(0, -1).some(whole)
      );
    } finally {
      await Deno.remove(scratch, { recursive: true });
    }
  }

  /** The paths that differ from tree `from` to tree `to`, in git's path order. */
  async changes(from: string, to: string): Promise<TreeChange[]> {
    if (from === to) return [];
    // diff-tree reads the work tree's `.gitattributes` files too.
    const raw = await this.#git(["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to], {
      maxBytes: 256 * 1024 * 1024,
      readsWorkspace: "attributes",
    });
    const fields = decoder.decode(raw.stdout).split("\0");
    const changes: TreeChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const match = fields[i].match(/^:(\d{6}) (\d{6}) ([0-9a-f]{40}) ([0-9a-f]{40}) ([A-Z])/);
      if (!match || STATUS[match[5]] === undefined) continue;
      const [, oldMode, newMode, oldId, newId, letter] = match;
      changes.push({ path: fields[i + 1], status: STATUS[letter], oldMode, newMode, oldId, newId });
    }
    return changes;
  }

  /**
   * The patch from tree `from` to tree `to` (with a summary of sizes), cut at `maxBytes`;
   * only of `paths` when given. A long list is asked for in parts (each named on git's command
   * line, whose whole size the system limits), one patch after the other.
   */
  async patch(
    from: string,
    to: string,
    maxBytes = 1024 * 1024,
    paths?: readonly string[],
  ): Promise<string> {
    const args = [
      "diff-tree",
      "-r",
      "-p",
      "--stat",
      "--find-renames",
      "--no-ext-diff",
      "--no-textconv",
      "--no-color",
      from,
      to,
    ];
    if (paths?.length === 0) return "";
    const cut = (text: string) => `${text}\n… (diff cut at ${maxBytes} bytes)\n`;
    let text = "";
    for (const part of paths === undefined ? [undefined] : argumentParts(paths)) {
      const left = maxBytes - encoder.encode(text).length;
      if (left <= 0) return cut(text);
      const result = await this.#git(part === undefined ? args : [...args, "--", ...part], {
        maxBytes: left,
        cut: true,
        readsWorkspace: "attributes",
      });
      text += decoder.decode(result.stdout);
      if (result.truncated) return cut(text);
    }
    return text;
  }

  /** The content of blob `id`. */
  async blob(id: string): Promise<Uint8Array> {
    if (!TREE_ID.test(id)) throw new TypeError(`Cannot read blob "${id}": not an object id`);
    const result = await this.#git(["cat-file", "blob", id], {
      maxBytes: this.#options.maxFileBytes + 1,
    });
    if (result.truncated) throw new TernError(`Cannot read blob "${id}": larger than the limit`);
    return result.stdout;
  }

  /**
   * The contents of blobs `ids`, in order: one git process per {@linkcode BLOB_BATCH} of them
   * (`cat-file --batch`), not one each, for a rewind restoring thousands of files.
   * @throws {TernError} for a blob that is missing or larger than the limit.
   */
  async blobs(ids: readonly string[]): Promise<Uint8Array[]> {
    const limit = this.#options.maxFileBytes;
    const contents: Uint8Array[] = [];
    for (let start = 0; start < ids.length; start += BLOB_BATCH) {
      const part = ids.slice(start, start + BLOB_BATCH);
      const bad = part.find((id) => !TREE_ID.test(id));
      if (bad !== undefined) throw new TypeError(`Cannot read blob "${bad}": not an object id`);
      const result = await this.#git(["cat-file", "--batch"], {
        input: encoder.encode(part.map((id) => `${id}\n`).join("")),
        maxBytes: part.length * (limit + 100),
      });
      const out = result.stdout;
      let at = 0;
      for (const id of part) {
        const end = out.indexOf(10, at);
        const header = decoder.decode(out.subarray(at, end < 0 ? out.length : end)).split(" ");
        const size = Number(header[2]);
        const whole = end + 1 + size < out.length;
        if (end < 0 || header[0] !== id || header[1] !== "blob" || !(size <= limit) || !whole) {
          const why = header[1] !== "blob"
            ? "not in the store"
            : size > limit
            ? "larger than the limit"
            : "git's answer was cut short";
          throw new TernError(`Cannot read blob "${id}": ${why}`);
        }
        contents.push(out.slice(end + 1, end + 1 + size));
        at = end + 1 + size + 1;
      }
    }
    return contents;
  }

  /**
   * The contents of blobs `ids`, in order, read in batches of at most `batchBytes` bytes (one
   * blob larger than that is a batch of its own) and {@linkcode BLOB_BATCH} blobs: a rewind
   * restoring gigabytes holds one batch at a time, not all of them (their sizes are asked for
   * first, `cat-file --batch-check`).
   * @throws {TernError} for a blob that is missing or larger than the limit.
   */
  async *eachBlob(
    ids: readonly string[],
    batchBytes = 64 * 1024 * 1024,
  ): AsyncGenerator<Uint8Array> {
    const bad = ids.find((id) => !TREE_ID.test(id));
    if (bad !== undefined) throw new TypeError(`Cannot read blob "${bad}": not an object id`);
    for (let start = 0; start < ids.length; start += SIZE_BATCH) {
      const part = ids.slice(start, start + SIZE_BATCH);
      const result = await this.#git(["cat-file", "--batch-check"], {
        input: encoder.encode(part.map((id) => `${id}\n`).join("")),
        maxBytes: part.length * 128,
      });
      // A missing one counts as empty here: `blobs()` names it.
      const sizes = new Map(
        decoder.decode(result.stdout).split("\n").map((line) => {
          const [id, type, size] = line.split(" ");
          return [id, type === "blob" ? Number(size) : 0] as const;
        }),
      );
      let batch: string[] = [];
      let bytes = 0;
      for (const id of part) {
        const size = sizes.get(id) ?? 0;
        if (batch.length > 0 && (bytes + size > batchBytes || batch.length >= BLOB_BATCH)) {
          yield* await this.blobs(batch);
          batch = [];
          bytes = 0;
        }
        batch.push(id);
        bytes += size;
      }
      if (batch.length > 0) yield* await this.blobs(batch);
    }
  }

  /** Whether `tree` is an object of this store. */
  async has(tree: string): Promise<boolean> {
    if (!TREE_ID.test(tree)) return false;
    const result = await this.#git(["cat-file", "-e", `${tree}^{tree}`], { okCodes: [0, 1, 128] });
    return result.code === 0;
  }

  /** Runs git on the store; in the view (confined_git.ts) when `readsWorkspace`. */
  async #git(
    args: string[],
    options: {
      input?: Uint8Array;
      maxBytes?: number;
      okCodes?: number[];
      /**
       * The command reads the workspace: in the store's view (`true`); or `"attributes"`: it
       * reads only `.gitattributes` and racily clean files it compares, storing nothing, so it
       * runs on the host unless FIFOs git would wait on are known (then in the view, released).
       */
      readsWorkspace?: boolean | "attributes";
      /** Output cut at `maxBytes` (git is then killed) is a result, not a failure. */
      cut?: boolean;
    } = {},
  ): Promise<GitResult> {
    const reads = options.readsWorkspace;
    const run = reads
      ? (args: readonly string[], given: WorkspaceGitOptions) =>
        this.#workspaceGit(args, given, reads === "attributes")
      : runGit;
    let result: GitResult | undefined;
    try {
      result = await run(args, {
        workspace: this.workspace,
        cwd: this.workspace,
        env: { PATH: this.#options.path ?? readPath() },
        isolated: { gitDir: this.gitDir, workTree: this.workspace },
        indexFile: this.#index,
        input: options.input,
        maxBytes: options.maxBytes,
        timeoutMs: this.#options.timeoutMs ?? 30_000,
        signal: this.#signal,
      });
    } finally {
      const failed = result === undefined || result.timedOut ||
        (result.code !== 0 && !(options.okCodes ?? [0]).includes(result.code));
      if (failed && LOCKING.has(args[0])) this.#dropLock(result?.stderr ?? "");
    }
    const command = `git ${args[0]}`;
    if (!result) throw new TernError(`Cannot checkpoint the workspace: git is not available`);
    if (result.timedOut) {
      throw new TernError(`Cannot checkpoint the workspace: "${command}" timed out`);
    }
    if (!(options.okCodes ?? [0]).includes(result.code) && !(options.cut && result.truncated)) {
      const detail = result.stderr.split("\n", 1)[0] || `exit code ${result.code}`;
      throw new TernError(`Cannot checkpoint the workspace: "${command}" failed: ${detail}`);
    }
    return result;
  }

  /**
   * Removes the index's lock after a command on it failed: one killed (a signal such as SIGBUS
   * from a file truncated while git read it, or the timeout) leaves its lock, and every later
   * command on the index would fail on it. tern is the only writer of its store's indexes; a
   * lock the command failed on (`File exists`) goes only once it is older than a command may
   * run, as another tern process on the same session may hold it.
   */
  #dropLock(stderr: string): void {
    const lock = `${this.#index}.lock`;
    if (/File exists/.test(stderr) && !this.#staleLock(lock)) return;
    try {
      Deno.removeSync(lock);
    } catch {
      // None.
    }
  }

  /** Whether lock file `lock` is older than any live command's (its timeout, and a margin). */
  #staleLock(lock: string): boolean {
    try {
      const mtime = Deno.lstatSync(lock).mtime?.getTime() ?? 0;
      return Date.now() - mtime > (this.#options.timeoutMs ?? 30_000) + 5_000;
    } catch {
      return false;
    }
  }

  /**
   * `runWorkspaceGit` with the FIFOs found so far released; when it has run
   * {@linkcode FIFO_CHECK_MS}, the workspace is searched for new ones, and found ones stop it
   * and it runs again with them too. @throws {TernError} past {@linkcode MAX_FIFOS} of them.
   */
  async #workspaceGit(
    args: readonly string[],
    options: Omit<WorkspaceGitOptions, "fifos">,
    hostUnlessFifos = false,
  ): Promise<GitResult | undefined> {
    for (let tries = 0;; tries++) {
      this.#fifos = this.#fifos.filter(isFifo);
      if (this.#fifos.length > MAX_FIFOS) {
        throw new TernError(
          `Cannot checkpoint the workspace: it holds ${this.#fifos.length} FIFOs named ` +
            `.gitignore or .gitattributes, which git would wait on (at most ${MAX_FIFOS} are ` +
            `released); remove them (find . -name '.git*' -type p)`,
        );
      }
      const stop = new AbortController();
      // The caller's stop too: a command stopped by it fails (and leaves no lock, `#git`).
      const signal = options.signal === undefined
        ? stop.signal
        : AbortSignal.any([stop.signal, options.signal]);
      const known = new Set(this.#fifos);
      let found: string[] = [];
      // A command making new ones all the while gets three searches, then git its timeout.
      const check = tries > 2 ? undefined : after(FIFO_CHECK_MS, () => {
        findGitFifos(this.workspace, options.env.PATH).then((fifos) => {
          found = fifos.filter((fifo) => !known.has(fifo));
          if (found.length > 0) stop.abort();
        });
      });
      try {
        const result = hostUnlessFifos && this.#fifos.length === 0
          ? await runGit(args, { ...options, signal })
          : await runWorkspaceGit(args, { ...options, fifos: this.#fifos, signal });
        if (!stop.signal.aborted) return result;
      } finally {
        check?.cancel();
      }
      // A command stopped while it held the store's index lock (update-index, write-tree) left
      // it: the next would fail on it. Never a lock of the project's own (its index is read).
      const index = options.indexFile;
      if (index !== undefined && !relative(this.gitDir, index).startsWith("..")) {
        await Deno.remove(`${index}.lock`).catch(() => {});
      }
      this.#fifos.push(...found);
      const file = join(this.gitDir, FIFOS_FILE);
      await Deno.writeTextFile(file, this.#fifos.join("\0")).catch(() => {});
    }
  }
}

/**
 * The names of a `git ls-files -z` listing (each once) git can store, and those it cannot as
 * shown: a name that is not UTF-8 (Deno cannot name such a file to read it), and one with a
 * part git refuses to store ({@linkcode gitRefuses}).
 */
function storable(bytes: Uint8Array): [string[], string[]] {
  const names = new Set<string>();
  const refused: string[] = [];
  const strict = new TextDecoder("utf-8", { fatal: true });
  let start = 0;
  for (let end = bytes.indexOf(0); end !== -1; start = end + 1, end = bytes.indexOf(0, start)) {
    if (end === start) continue;
    const raw = bytes.subarray(start, end);
    let name: string;
    try {
      name = strict.decode(raw);
    } catch {
      refused.push(decoder.decode(raw));
      continue;
    }
    if (gitRefuses(name)) refused.push(name);
    else names.add(name);
  }
  return [[...names], refused];
}

/**
 * Whether git ignores `path` when asked to store it (its `verify_path` with the NTFS and HFS
 * guards, on by default): a part that is `.git` in any case, followed by dots or spaces or an
 * NTFS stream (`.GIT`, `.git.`, `.git::$INDEX_ALLOCATION`), or the short name `git~1`.
 */
export function gitRefuses(path: string): boolean {
  return path.split("/").some((name) => /^(?:\.git[. ]*(?::.*)?|git~1)$/i.test(name));
}

/** `snapshot`, with `unstorable` when there are such paths. */
function withUnstorable(snapshot: Snapshot, unstorable: string[]): Snapshot {
  return unstorable.length === 0 ? snapshot : { ...snapshot, unstorable };
}

/** The folders `path` is in, outermost first, each ending in "/", and `path` itself with one. */
function folders(path: string): string[] {
  const parts = path.split("/");
  return parts.map((_, i) => `${parts.slice(0, i + 1).join("/")}/`);
}

/**
 * The file a folder of a scratch work tree holds for `ignoredBy` to ask about the folder: git
 * lists no empty one.
 */
const SCRATCH_NAME = "tern-folder-probe";

/** A relative path of plain names: none empty, `.`, `..` or `.git` in any case. */
function plainPath(path: string): boolean {
  return path.split("/").every((name) =>
    name !== "" && name !== "." && name !== ".." && name.toLowerCase() !== ".git"
  );
}

/**
 * A test of whether every folder above a relative path is a real folder (no symlink, no file),
 * remembering the folders it checked.
 */
function realFolders(workspace: string): (path: string) => boolean {
  const known = new Map<string, boolean>();
  const isReal = (folder: string): boolean => {
    if (folder === "") return true;
    let real = known.get(folder);
    if (real === undefined) {
      const slash = folder.lastIndexOf("/");
      real = isReal(slash < 0 ? "" : folder.slice(0, slash)) &&
        (() => {
          try {
            const info = Deno.lstatSync(join(workspace, folder));
            return info.isDirectory && !info.isSymlink;
          } catch {
            return false;
          }
        })();
      known.set(folder, real);
    }
    return real;
  };
  return (path) => {
    const slash = path.lastIndexOf("/");
    return slash < 0 || isReal(path.slice(0, slash));
  };
}

/** The most bytes of paths named on one git command line (the system allows about 2 MiB). */
const MAX_ARGUMENT_BYTES = 256 * 1024;

/** `paths` in consecutive parts of at most {@linkcode MAX_ARGUMENT_BYTES} each. */
function argumentParts(paths: readonly string[]): string[][] {
  const parts: string[][] = [[]];
  let size = 0;
  for (const path of paths) {
    const bytes = encoder.encode(path).length + 1;
    if (size + bytes > MAX_ARGUMENT_BYTES && parts.at(-1)!.length > 0) {
      parts.push([]);
      size = 0;
    }
    parts.at(-1)!.push(path);
    size += bytes;
  }
  return parts;
}

function nulList(bytes: Uint8Array): string[] {
  const names = decoder.decode(bytes).split("\0");
  names.pop();
  return names.filter((name) => name !== "");
}

function nulJoin(paths: readonly string[]): Uint8Array {
  return encoder.encode(paths.map((path) => `${path}\0`).join(""));
}

function readPath(): string {
  try {
    return Deno.env.get("PATH") ?? "/usr/bin:/bin";
  } catch {
    return "/usr/bin:/bin";
  }
}

function readTextOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

function existsNoFollow(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * How many entries the git index at `path` holds (its header: "DIRC", a version, then the count,
 * big-endian); 0 when it cannot be read or is not an index.
 */
function indexEntries(path: string): number {
  try {
    using file = Deno.openSync(path, { read: true });
    const header = new Uint8Array(12);
    let read = 0;
    while (read < header.length) {
      const n = file.readSync(header.subarray(read));
      if (n === null) return 0;
      read += n;
    }
    const signature = String.fromCharCode(...header.subarray(0, 4));
    return signature === "DIRC" ? new DataView(header.buffer).getUint32(8) : 0;
  } catch {
    return 0;
  }
}
