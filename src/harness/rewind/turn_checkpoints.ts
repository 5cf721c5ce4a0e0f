/**
 * Per-turn checkpoints of the workspace: a turn's first call that may change files (a tool
 * that is not read-only: the file tools, bash, MCP tools) waits for a snapshot of the workspace,
 * which is recorded as the turn's checkpoint; when the turn ends, the workspace as the last such
 * call left it is recorded with the difference, each path marked as changed by a file tool (it
 * declared the path) or by a command (everything else). A failed checkpoint is told once and
 * never stops a turn.
 *
 * Kept off the turn's path while the model thinks: the first snapshot starts once the model
 * request is out (`requestOut()`, when the model starts answering; until the first writing call
 * only read-only tools run, which change nothing), not before it, where its git processes and
 * file reads would delay the request; the snapshot after the writing calls starts once they
 * pause (100 ms after the last ended: while the model reads its result; calls in quick
 * succession share one), and only the last is kept. The turn's end waits for that one, so
 * nothing done after the turn (the person's edits) is counted as the turn's. Every git command
 * on the session's index runs one at a time.
 *
 * What the person's deny rules hide from every tool (`.env`, `secrets/**`) is never
 * checkpointed: no tool or command can change it, and a copy in the store would be one more place
 * the secret lives (and a rewind's diff would show it).
 */
import { dirname } from "../../core/path.ts";
import type { PermissionRule } from "../../config/schema.ts";
import type { PathTest } from "../../sandbox/denied_paths.ts";
import { hiddenInWorkspace, type WorkspaceHidden } from "../path_denials.ts";
import type { Tool } from "../../tools/define.ts";
import { ToolRegistry } from "../../tools/registry.ts";
import { appendRecord, type FileChange, storeDir } from "./records.ts";
import type { ShadowStore, Snapshot } from "./shadow_store.ts";
import { after as runAfter, type Timer } from "../../core/timer.ts";
import { phaseMark } from "../../core/phase_marks.ts";

/** Options of {@linkcode TurnCheckpoints}. */
export interface TurnCheckpointsOptions {
  /** The session file. */
  sessionPath: string;
  /** The session id: names its index in the store. */
  sessionId: string;
  /** Absolute real path. */
  workspace: string;
  /** Files larger than this (bytes) are not checkpointed (reported). Default 10 MiB. */
  maxFileBytes?: number;
  /** Most files one checkpoint reads (the `rewindMaxFiles` setting; the store's default). */
  maxFiles?: number;
  /**
   * How long a writing call waits for the turn's checkpoint before the person is told why it
   * has not started (default {@linkcode SLOW_CHECKPOINT_MS}).
   */
  slowMs?: number;
  /** Told when a checkpoint fails (once per conversation) or skips big files. */
  warn: (text: string) => void;
  /**
   * The person's rules now (they may change between turns): the paths their deny rules hide
   * are never read into a checkpoint.
   */
  rules: () => readonly PermissionRule[];
}

/**
 * How long after a writing call the snapshot of its changes waits for the next call: shorter
 * than a model takes to answer, longer than a round of a scripted or local one.
 */
const SETTLE_MS = 100;

/**
 * A call that waited this long for the turn's checkpoint is explained (once): the first in a
 * large workspace reads every file, and the call would look stuck.
 */
const SLOW_CHECKPOINT_MS = 2_000;

/** The default of the `rewindMaxFileBytes` setting. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

interface TurnState {
  entryId: string;
  /**
   * Started once the request is out (`requestOut()`) or at the first writing call; recorded as
   * the checkpoint at the first writing call.
   */
  snapshot?: Promise<Snapshot | undefined>;
  /** Stops `snapshot` while no writing call claimed it (`abandon()`). */
  stop?: AbortController;
  before?: Promise<Snapshot | undefined>;
  /** The workspace after the latest writing call, with what changed since `before`. */
  after?: Promise<{ snapshot: Snapshot; changes: FileChange[] } | undefined>;
  /** Paths (as the tools gave them) that file tools declared they write. */
  toolPaths: Set<string>;
  /** An `after` snapshot is queued and has not started yet. */
  afterQueued?: boolean;
  /** Set when a writing call ended: queues the `after` snapshot once the calls pause. */
  settle?: Timer;
}

/** See the module comment. One per conversation and session. */
export class TurnCheckpoints {
  readonly #options: TurnCheckpointsOptions;
  #store: Promise<ShadowStore> | undefined;
  #turn: TurnState | undefined;
  #failed = false;
  /** The store's work in order: one git command on the index at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  #toldSkipped = new Set<string>();
  /** The hidden paths' test, made once per rules list. */
  #hidden: WorkspaceHidden | undefined;
  /** The person was told a call waits for a checkpoint. */
  #toldSlow = false;
  /** Turns whose snapshot started (`requestOut`) and no writing call has claimed yet. */
  #unclaimed = new Set<TurnState>();

  constructor(options: TurnCheckpointsOptions) {
    this.#options = options;
  }

  get sessionPath(): string {
    return this.#options.sessionPath;
  }

  /**
   * `tools` for the turn started by user entry `entryId`: a call of a tool that is not
   * read-only first waits for the turn's checkpoint (taken once).
   */
  wrap(tools: ToolRegistry, entryId: string): ToolRegistry {
    const turn: TurnState = { entryId, toolPaths: new Set() };
    this.#turn = turn;
    return new CheckpointedTools(tools, (tool) => ({
      ...tool,
      paths: (args) => tool.paths(args),
      ...(tool.network ? { network: (args: unknown) => tool.network!(args) } : {}),
      run: async (args, ctx) => {
        // A call in quick succession: the snapshot waits until the calls pause.
        cancelSettle(turn);
        turn.before ??= this.#record(turn);
        const slow = this.#toldSlow ? undefined : runAfter(
          this.#options.slowMs ?? SLOW_CHECKPOINT_MS,
          () => this.#tellSlow(),
        );
        try {
          await turn.before;
        } finally {
          slow?.cancel();
        }
        for (const path of await tool.paths(args)) {
          if (path.write) turn.toolPaths.add(path.path.replace(/^\.\//, ""));
        }
        try {
          return await tool.run(args, ctx);
        } finally {
          // Taken once the calls pause (the model thinks): a turn whose rounds follow each
          // other fast does not spend each round's time on one.
          cancelSettle(turn);
          turn.settle = runAfter(SETTLE_MS, () => {
            turn.settle = undefined;
            this.#queueAfter(turn);
          });
        }
      },
    }));
  }

  /**
   * Starts the current turn's snapshot (once): the model request is out, and the snapshot runs
   * while the model answers. Without this call it starts at the turn's first writing call.
   */
  requestOut(): void {
    const turn = this.#turn;
    if (turn === undefined || turn.snapshot !== undefined) return;
    turn.stop = new AbortController();
    this.#unclaimed.add(turn);
    turn.snapshot = this.#snapshot(turn.stop.signal);
    turn.snapshot.finally(() => this.#unclaimed.delete(turn));
  }

  /**
   * Stops the snapshots no writing call needed (a turn that only read and answered), so closing
   * does not wait for them; the snapshots recorded as checkpoints run on. Then resolves like
   * {@linkcode idle}. For the end of a session.
   */
  async abandon(): Promise<void> {
    for (const turn of this.#unclaimed) turn.stop?.abort();
    this.#unclaimed.clear();
    await this.idle();
  }

  /**
   * Ends the turn: when a checkpoint was taken, records the workspace after the last writing
   * call and what changed. Resolves to the changes (none when nothing was taken). Never rejects.
   */
  async endTurn(): Promise<FileChange[]> {
    const turn = this.#turn;
    this.#turn = undefined;
    if (turn?.settle !== undefined) {
      cancelSettle(turn);
      this.#queueAfter(turn);
    }
    const after = await turn?.after;
    if (!turn || !after) return [];
    try {
      appendRecord(this.#options.sessionPath, {
        kind: "after",
        entryId: turn.entryId,
        time: new Date().toISOString(),
        ...after.snapshot,
        changes: after.changes,
      });
    } catch (error) {
      this.#fail(error);
      return [];
    }
    return after.changes;
  }

  /** Resolves when no snapshot is under way (before a rewind, or closing). */
  async idle(): Promise<void> {
    for (let queue = this.#queue;; queue = this.#queue) {
      await queue.catch(() => {});
      if (queue === this.#queue) return;
    }
  }

  async #after(
    turn: TurnState,
  ): Promise<{ snapshot: Snapshot; changes: FileChange[] } | undefined> {
    const before = await turn.before;
    if (!before) return undefined;
    try {
      const store = await this.#open();
      // The rules change only between turns: `before` left out the same paths.
      const snapshot = await store.snapshot(await this.#hiddenTest());
      this.#tellSkipped(snapshot);
      const changes: FileChange[] = (await store.changes(before.tree, snapshot.tree)).map((c) => ({
        path: c.path,
        status: c.status,
        by: turn.toolPaths.has(c.path) ? "tool" : "command",
      }));
      return { snapshot, changes };
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
  }

  /**
   * Queues the snapshot after the latest writing calls. One waiting is enough: it starts after
   * they ended, so it sees what every call before it changed.
   */
  #queueAfter(turn: TurnState): void {
    if (turn.afterQueued) return;
    turn.afterQueued = true;
    turn.after = this.#serial(() => {
      turn.afterQueued = false;
      return this.#after(turn);
    });
  }

  #snapshot(signal?: AbortSignal): Promise<Snapshot | undefined> {
    return this.#serial(async () => {
      if (this.#failed || signal?.aborted) return undefined;
      try {
        const snapshot = await (await this.#open()).snapshot(await this.#hiddenTest(), signal);
        phaseMark("checkpoint");
        return snapshot;
      } catch (error) {
        // Abandoned (no call needed it): nothing failed.
        if (!signal?.aborted) this.#fail(error);
        return undefined;
      }
    });
  }

  async #record(turn: TurnState): Promise<Snapshot | undefined> {
    // Claimed: a writing call waits for it, so it is never abandoned. One abandoned already
    // (the session was closing) is taken again.
    this.#unclaimed.delete(turn);
    if (turn.stop?.signal.aborted) turn.snapshot = undefined;
    const snapshot = await (turn.snapshot ??= this.#snapshot());
    if (!snapshot) return undefined;
    try {
      this.#tellSkipped(snapshot);
      appendRecord(this.#options.sessionPath, {
        kind: "before",
        entryId: turn.entryId,
        time: new Date().toISOString(),
        ...snapshot,
      });
      return snapshot;
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
  }

  #serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => {});
    return run;
  }

  #open(): Promise<ShadowStore> {
    const { sessionPath, sessionId, workspace, maxFileBytes, maxFiles } = this.#options;
    // The store's code (git in a bubblewrap view) loads with the turn's first snapshot, which
    // starts once the model request is out (`requestOut`), not before it.
    this.#store ??= import("./shadow_store.ts").then(({ ShadowStore }) =>
      ShadowStore.open(storeDir(dirname(sessionPath)), workspace, {
        indexName: sessionId,
        maxFileBytes: maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
        ...(maxFiles === undefined ? {} : { maxFiles }),
      })
    );
    return this.#store;
  }

  /**
   * What the person's deny rules hide now (links to a hidden file included); undefined when
   * nothing. The same test object while it finds the same paths: a new one makes the next
   * snapshot read the store's whole index again, to drop what it now hides.
   */
  async #hiddenTest(): Promise<PathTest | undefined> {
    const found = await hiddenInWorkspace(this.#options.workspace, this.#options.rules());
    if (found === undefined) return undefined;
    if (this.#hidden?.key !== found.key) this.#hidden = found;
    return this.#hidden.test;
  }

  /** Tells, once per path, the files `snapshot` left out: too large, or named as git cannot. */
  #tellSkipped(snapshot: Snapshot): void {
    const fresh = (paths: readonly string[]) => {
      const told = paths.filter((path) => !this.#toldSkipped.has(path));
      for (const path of told) this.#toldSkipped.add(path);
      const names = told.slice(0, 5).map((path) => JSON.stringify(path)).join(", ");
      return told.length === 0
        ? ""
        : names + (told.length > 5 ? ` and ${told.length - 5} more` : "");
    };
    const large = fresh(snapshot.skipped);
    if (large !== "") {
      const limit = this.#options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
      this.#options.warn(
        `checkpoints leave out files over ${limit} bytes: ${large} (a rewind cannot restore them)`,
      );
    }
    const unstorable = fresh(snapshot.unstorable ?? []);
    if (unstorable !== "") {
      this.#options.warn(
        `checkpoints leave out files whose names git cannot store (not UTF-8, or a part ` +
          `like .git): ${unstorable} (a rewind neither restores nor removes them)`,
      );
    }
  }

  #tellSlow(): void {
    if (this.#toldSlow) return;
    this.#toldSlow = true;
    this.#options.warn(
      "the call waits for this turn's checkpoint of the workspace (the first in a large " +
        "workspace reads every file once; rewindMaxFileBytes 0 turns checkpoints off)",
    );
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#store = undefined;
    const reason = error instanceof Error ? error.message : String(error);
    try {
      // So that a rewind across this point knows it cannot tell tern's changes from others'.
      appendRecord(this.#options.sessionPath, {
        kind: "failed",
        entryId: this.#turn?.entryId ?? "",
        time: new Date().toISOString(),
        reason,
      });
    } catch {
      // The log itself failed: no record, and no rewind can start from a later checkpoint.
    }
    this.#options.warn(
      `checkpoints stopped in this session (a rewind restores files only as an earlier ` +
        `checkpoint had them, and counts every file changed since as changed outside tern): ` +
        reason,
    );
  }
}

/**
 * A view of a registry whose tools that are not read-only come wrapped. It follows the registry
 * (an MCP server's new tools reach the model within the turn) and wraps each tool once.
 */
class CheckpointedTools extends ToolRegistry {
  readonly #inner: ToolRegistry;
  readonly #wrap: (tool: Tool) => Tool;
  readonly #wrapped = new WeakMap<Tool, Tool>();

  constructor(inner: ToolRegistry, wrap: (tool: Tool) => Tool) {
    super();
    this.#inner = inner;
    this.#wrap = wrap;
  }

  override register(tool: Tool): void {
    this.#inner.register(tool);
  }

  override unregister(name: string): boolean {
    return this.#inner.unregister(name);
  }

  override get(name: string): Tool | undefined {
    const tool = this.#inner.get(name);
    if (tool === undefined || tool.readOnly) return tool;
    let wrapped = this.#wrapped.get(tool);
    if (wrapped === undefined) {
      wrapped = this.#wrap(tool);
      this.#wrapped.set(tool, wrapped);
    }
    return wrapped;
  }

  override get names(): string[] {
    return this.#inner.names;
  }

  override guidance(): string[] {
    return this.#inner.guidance();
  }

  override specs(): ReturnType<ToolRegistry["specs"]> {
    return this.#inner.specs();
  }
}

/** Stops the wait for the calls to pause (a call came, or the turn ended). */
function cancelSettle(turn: TurnState): void {
  turn.settle?.cancel();
  turn.settle = undefined;
}
