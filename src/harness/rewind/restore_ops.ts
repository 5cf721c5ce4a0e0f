/**
 * The operations of a restore and the process that carries them out (`restore_main.ts`), with
 * read and write access to the workspace only: by its Deno flags, and where bubblewrap works by
 * a view (view.ts) in which nothing else exists, so that a folder swapped for a link to outside
 * while it runs leads nowhere (Deno checks a path as text, not where its links lead).
 */
import { entryArgv, packaging } from "../../core/packaging.ts";
import { ownDenoEnv } from "../../core/deno_dir_env.ts";
import { fileUrlToPath } from "../../core/file_url.ts";
import {
  killSandboxInit,
  spawnProcessGroup,
  terminateProcessGroup,
} from "../../core/process_group.ts";
import { sourceUrl } from "../../core/source_url.ts";
import { viewLauncher } from "./view.ts";
import { CUT_SHORT } from "./safe_files.ts";
import { join } from "../../core/path.ts";
import { ownCodePaths } from "../../sandbox/own_code.ts";

/** One change to the workspace, by a path relative to it. */
export type RestoreOp =
  | { op: "remove"; path: string }
  | { op: "link"; path: string; target: string }
  | { op: "write"; path: string; data: Uint8Array; executable: boolean };

/**
 * How the restore process reads its request on stdin, one JSON line at a time: first
 * `{"workspace": <absolute real path>}`, then one line per operation (a write as its header,
 * `{"op":"write","path":…,"executable":…,"size":N}`, followed by lines of base64 of at most
 * {@linkcode CHUNK_BYTES} bytes each until N bytes came), then `{"end":true}`. A request is
 * never one string: its size is the files', and a few hundred MB of them is past what a string
 * may hold.
 */
export type RestoreLine =
  | { workspace: string }
  | { op: "remove"; path: string }
  | { op: "link"; path: string; target: string }
  | { op: "write"; path: string; executable: boolean; size: number }
  | { end: true };

/** Bytes of a file per line of the request (before base64). */
export const CHUNK_BYTES = 1024 * 1024;

/** The line it prints: how many operations were done, and what stopped the rest. */
export interface RestoreAnswer {
  done: number;
  error?: string;
}

/** Options of {@linkcode runRestore}. */
export interface RestoreOptions {
  /**
   * Milliseconds the process may take to answer once the request is sent or given up
   * (default 60,000); past them it is killed.
   */
  answerMs?: number;
  /**
   * Absolute paths in the workspace the restore's view keeps read-only besides its own list (see
   * {@linkcode keptFromRestore}): what commands cannot write there either, such as the paths the
   * person's deny rules hide. A path outside the workspace is left out.
   */
  keep?: readonly string[];
}

/**
 * Runs `ops` (taken one at a time as they are sent: a caller reading files' contents as it goes
 * holds one batch of them, never all) in the restore process. Never throws for a failed
 * operation: the answer says. When taking the next operation fails, the process is told the
 * request ended there and answers how many it did, with that failure as its error. The process
 * never outlives the call: when anything else goes wrong, its stdin is closed and its process
 * group killed.
 * @throws {Error} when the process cannot start or answers nonsense.
 */
export async function runRestore(
  workspace: string,
  ops: Iterable<RestoreOp> | AsyncIterable<RestoreOp>,
  options: RestoreOptions = {},
): Promise<RestoreAnswer> {
  const source = Symbol.asyncIterator in ops
    ? ops[Symbol.asyncIterator]()
    : (ops as Iterable<RestoreOp>)[Symbol.iterator]();
  const first = await source.next();
  if (first.done) return { done: 0 };
  const flags = (scoped: boolean) => [
    "--no-prompt",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--no-remote",
    ...(scoped ? [`--allow-read=${workspace}`, `--allow-write=${workspace}`] : [
      "--allow-read",
      "--allow-write",
    ]),
  ];
  const [command] = entryArgv("rewind-restore", flags(true), []);
  const env: Record<string, string> = ownDenoEnv();
  // Deno, its cache and tern's code read-only; the workspace writable; in it, what commands may
  // not write read-only again, mounted last.
  const view = await viewLauncher([
    ...[command, env.DENO_DIR, restoreCode()].flatMap((path) =>
      path === undefined ? [] : [{ path, writable: false }]
    ),
    { path: workspace, writable: true },
    ...(await keptFromRestore(workspace, options.keep)).map((path) => ({ path, writable: false })),
  ], workspace);
  // In the view the workspace is all there is to write: the flags need not name it, and
  // Deno.symlink (a link the turn removed) refuses to run under path-scoped ones. Without the
  // view they stay scoped, and a link cannot be restored there (the restore says so).
  const [, ...args] = entryArgv("rewind-restore", flags(view === undefined), []);
  // Without a cache folder of its own Deno looks for the home folder, which the view lacks: it
  // gets one that is not there (and cannot be made), so it caches nothing.
  if (view !== undefined) env.DENO_DIR ??= "/nonexistent/deno";
  const [program, ...programArgs] = [...view ?? [], command, ...args];
  // A group of its own: the terminal's Ctrl-C goes to tern, which lets the restore end (a
  // restore stopped partway leaves the files half restored), not to this process.
  const child = spawnProcessGroup(program, {
    args: programArgs,
    clearEnv: true,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const output = child.output();
  const writer = child.stdin.getWriter();
  let answered = false;
  try {
    /** What stopped taking operations: the restore's error when it answers. */
    let stopped: unknown;
    const send = (line: RestoreLine | string) =>
      writer.write(encoder.encode(`${typeof line === "string" ? line : JSON.stringify(line)}\n`));
    try {
      await send({ workspace });
      let next: IteratorResult<RestoreOp> = first;
      for (; !next.done; next = await nextOp(source, (error) => stopped = error)) {
        const op = next.value;
        if (op.op !== "write") {
          await send(op);
          continue;
        }
        const { path, executable, data } = op;
        await send({ op: "write", path, executable, size: data.length });
        for (let at = 0; at < data.length; at += CHUNK_BYTES) {
          await send(data.subarray(at, at + CHUNK_BYTES).toBase64());
        }
      }
      if (stopped === undefined) await send({ end: true });
    } catch {
      // The process stopped reading (it failed an operation and answered): its answer says.
    }
    await writer.close().catch(() => {});
    const { stdout, stderr } = await within(output, options.answerMs ?? 60_000);
    const line = decoder.decode(stdout).trim().split("\n").pop() ?? "";
    let answer: RestoreAnswer;
    try {
      answer = JSON.parse(line) as RestoreAnswer;
    } catch {
      const detail = decoder.decode(stderr).trim().split("\n")[0] || "no answer";
      throw new Error(`Cannot restore the files: the restore process failed: ${detail}`);
    }
    answered = true;
    // Its own error stands when it stopped before the request did.
    if (stopped !== undefined && (answer.error === undefined || answer.error === CUT_SHORT)) {
      answer.error = stopped instanceof Error ? stopped.message : String(stopped);
    }
    return answer;
  } finally {
    if (!answered) {
      await writer.abort().catch(() => {});
      killSandboxInit(child.pid);
      await terminateProcessGroup(child.pid, child.status, 200);
      await output.catch(() => {});
    }
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The next operation; a failure to take it ends the request, told to `stop`. */
async function nextOp(
  source: Iterator<RestoreOp> | AsyncIterator<RestoreOp>,
  stop: (error: unknown) => void,
): Promise<IteratorResult<RestoreOp>> {
  try {
    return await source.next();
  } catch (error) {
    stop(error);
    return { done: true, value: undefined };
  }
}

/** `promise`, or a rejection once `ms` milliseconds passed. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Cannot restore the files: no answer from the restore in ${ms} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a restore never writes, as commands cannot: the workspace's `.tern`, every `.git` folder
 * in it, tern's own code where the workspace holds it (the person works on tern's checkout, or
 * Deno's cache lies in the workspace: own_code.ts) and `keep`. The restore's checks that no
 * folder on a path is a link can be raced (a background process swaps `foo` for a link to `.git`
 * or `src` between a check and the write of `foo/hooks/pre-commit`): in the view these are
 * read-only, so such a write fails. They are mounted after the workspace, which would otherwise
 * cover them.
 */
async function keptFromRestore(
  workspace: string,
  keep: readonly string[] = [],
): Promise<string[]> {
  const { gitDirsUnder } = await import("../../sandbox/protected_paths.ts");
  const found = await gitDirsUnder([workspace]);
  // A link (a repository can hold `.tern -> /etc`) is mounted where it leads, and left out when
  // that is outside the workspace (not in the view): bubblewrap cannot mount on a link there,
  // and every restore would fail.
  const kept = await Promise.all(
    [
      join(workspace, ".tern"),
      join(workspace, ".git"),
      ...found,
      ...ownCodeIn(workspace),
      ...keep,
    ].map(async (path) => {
      const real = await Deno.realPath(path).catch(() => path);
      return real === path || real.startsWith(`${workspace}/`) ? [real] : [];
    }),
  );
  return [...new Set(kept.flat())].filter((path) => path.startsWith(`${workspace}/`));
}

/**
 * The paths of the running tern's own code (own_code.ts) inside `workspace`, an absolute real
 * path: tools never change them, and neither does a rewind. Never throws.
 */
export function ownCodeIn(workspace: string): string[] {
  let env: Record<string, string>;
  try {
    env = Deno.env.toObject();
  } catch {
    env = {};
  }
  return ownCodePaths(env).filter((path) => path.startsWith(`${workspace}/`));
}

/** What the restore process's code is loaded from besides the executable: none when compiled. */
function restoreCode(): string | undefined {
  const packaged = packaging();
  if (packaged.kind === "single-file") return packaged.file;
  return packaged.kind === "tree" ? fileUrlToPath(sourceUrl("src")) : undefined;
}
