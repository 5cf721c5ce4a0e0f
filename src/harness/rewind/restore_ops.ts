/**
 * The operations of a restore and the process that carries them out (`restore_main.ts`), with
 * read and write access to the workspace only: by its Deno flags, and where bubblewrap works by
 * a view (view.ts) in which nothing else exists, so that a folder swapped for a link to outside
 * while it runs leads nowhere (Deno checks a path as text, not where its links lead).
 */
import { entryArgv, packaging } from "../../core/packaging.ts";
import { denoDirEnv } from "../../core/deno_dir_env.ts";
import { fileUrlToPath } from "../../core/file_url.ts";
import { spawnProcessGroup } from "../../core/process_group.ts";
import { sourceUrl } from "../../core/source_url.ts";
import { viewLauncher } from "./view.ts";
import { join } from "../../core/path.ts";

/** One change to the workspace, by a path relative to it. */
export type RestoreOp =
  | { op: "remove"; path: string }
  | { op: "link"; path: string; target: string }
  | { op: "write"; path: string; data: string; executable: boolean };

/** What the restore process reads on stdin. */
export interface RestoreRequest {
  /** Absolute real path. */
  workspace: string;
  ops: RestoreOp[];
}

/** The line it prints: how many operations were done, and what stopped the rest. */
export interface RestoreAnswer {
  done: number;
  error?: string;
}

/**
 * Runs `ops` in the restore process. Never throws for a failed operation: the answer says.
 * @throws {Error} when the process cannot start or answers nonsense.
 */
export async function runRestore(workspace: string, ops: RestoreOp[]): Promise<RestoreAnswer> {
  if (ops.length === 0) return { done: 0 };
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
  const env: Record<string, string> = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...denoDirEnv() };
  // Deno, its cache and tern's code read-only; the workspace writable; in it, what commands may
  // not write read-only again, mounted last.
  const view = await viewLauncher([
    ...[command, env.DENO_DIR, restoreCode()].flatMap((path) =>
      path === undefined ? [] : [{ path, writable: false }]
    ),
    { path: workspace, writable: true },
    ...(await keptFromRestore(workspace)).map((path) => ({ path, writable: false })),
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
  const writer = child.stdin.getWriter();
  const request: RestoreRequest = { workspace, ops };
  await writer.write(new TextEncoder().encode(JSON.stringify(request)));
  await writer.close();
  const { stdout, stderr } = await child.output();
  const line = new TextDecoder().decode(stdout).trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as RestoreAnswer;
  } catch {
    const detail = new TextDecoder().decode(stderr).trim().split("\n")[0] || "no answer";
    throw new Error(`Cannot restore the files: the restore process failed: ${detail}`);
  }
}

/**
 * What a restore never writes, as commands cannot: the workspace's `.tern` and every `.git`
 * folder in it. The restore's checks that no folder on a path is a link can be raced (a
 * background process swaps `foo` for a link to `.git` between a check and the write of
 * `foo/hooks/pre-commit`): in the view these are read-only, so such a write fails. Commands
 * cannot move them (each is a mount point in their view).
 */
async function keptFromRestore(workspace: string): Promise<string[]> {
  const { gitDirsUnder } = await import("../../sandbox/protected_paths.ts");
  const found = await gitDirsUnder([workspace]);
  return [...new Set([join(workspace, ".tern"), join(workspace, ".git"), ...found])];
}

/** What the restore process's code is loaded from besides the executable: none when compiled. */
function restoreCode(): string | undefined {
  const packaged = packaging();
  if (packaged.kind === "single-file") return packaged.file;
  return packaged.kind === "tree" ? fileUrlToPath(sourceUrl("src")) : undefined;
}
