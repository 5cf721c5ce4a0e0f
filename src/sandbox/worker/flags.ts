/**
 * Grants → the tool worker's Deno permissions: command-line flags for the process backend, a
 * permission object for the Worker backend, and the complete `deno run` argument list.
 *
 * What the worker needs beyond the grants to run its own code (measured on Deno 2.9.6):
 * - No read access. Static imports — the whole module graph of the main module, npm packages
 *   in `node_modules` and the DENO_DIR cache included — load without permission checks. A
 *   dynamic `import(url)` of a file, by contrast, needs `--allow-read` for every local module
 *   of its graph. So the worker's main module is a small `data:` module that imports this
 *   folder's child.ts and the handler statically ({@linkcode entryModuleUrl}), and the tern
 *   source tree stays unreadable to tools unless a grant covers it.
 * - Env access to {@linkcode RUNTIME_ENV}: tinyglobby reads `TINYGLOBBY_DEBUG` while loading,
 *   and a denied `process.env` read throws. The process backend's environment is cleared, so
 *   granting the name reveals nothing.
 */
import { entryArgv, packaging, workspaceAbove } from "../../core/packaging.ts";
import { fileUrlToPath } from "../../core/file_url.ts";
import { sourceUrl } from "../../core/source_url.ts";
import type { GrantList, Grants } from "../types.ts";

/**
 * The variable that tells the worker's grep which ripgrep it may start (ripgrep.ts); set only
 * when the worker may (worker_handler.ts).
 */
export const RIPGREP_ENV = "TERN_WORKER_RIPGREP";

/**
 * Environment variables the worker's code reads: its dependencies while loading, and
 * {@linkcode RIPGREP_ENV}; always granted.
 */
export const RUNTIME_ENV: readonly string[] = ["TINYGLOBBY_DEBUG", RIPGREP_ENV];

const KINDS = ["read", "write", "net", "env", "run"] as const;

/**
 * The permission flags for `grants`, in a fixed order: `--no-prompt`, then `--allow-read`,
 * `--allow-write`, `--allow-net`, `--allow-env`, `--allow-run`. A list becomes
 * `--allow-x=a,b`, "all" a bare `--allow-x`, an empty list nothing (denied, as `--no-prompt`
 * never asks). FFI and sys are never granted, and `--allow-all` is never used: when every
 * kind is "all" the five bare flags are followed by `--deny-ffi`.
 *
 * `denyWrite` follows as `--deny-write=a,b` when anything is writable: paths no grant may
 * reach (tern's own folder), which win over every `--allow-write`.
 *
 * Throws RangeError for an entry Deno's flag syntax cannot carry (empty, or with a comma or
 * a line break).
 */
export function denoFlags(grants: Grants, denyWrite: readonly string[] = []): string[] {
  const flags = ["--no-prompt"];
  for (const kind of KINDS) {
    const list = grants[kind];
    if (list === "all") flags.push(`--allow-${kind}`);
    else if (list.length > 0) flags.push(`--allow-${kind}=${checkedEntries(kind, list).join(",")}`);
  }
  if (KINDS.every((kind) => grants[kind] === "all")) flags.push("--deny-ffi");
  if (denyWrite.length > 0 && grantsWrite(grants)) {
    flags.push(`--deny-write=${checkedEntries("write", denyWrite).join(",")}`);
  }
  return flags;
}

function grantsWrite(grants: Grants): boolean {
  return grants.write === "all" || grants.write.length > 0;
}

function checkedEntries(kind: string, list: readonly string[]): string[] {
  for (const entry of list) {
    if (entry === "" || /[,\r\n]/.test(entry)) {
      throw new RangeError(
        `Cannot grant ${kind} access to ${
          JSON.stringify(entry)
        }: Deno's permission flags cannot express it`,
      );
    }
  }
  return [...new Set(list)];
}

/** The permission part of `Deno`'s Worker options (unstable: `--unstable-worker-options`). */
export interface WorkerPermissions {
  read: boolean | string[];
  write: boolean | string[];
  net: boolean | string[];
  env: boolean | string[];
  run: boolean | string[];
  ffi: false;
  sys: false;
  import: false;
}

/**
 * The permissions of a Worker confined to `grants`: a list stays a list, "all" becomes
 * `true`, an empty list `false`; ffi, sys and import are always `false`. A Worker cannot get
 * more than the process that creates it has.
 */
export function workerPermissions(grants: Grants): WorkerPermissions {
  const convert = (list: GrantList) => list === "all" ? true : list.length > 0 ? [...list] : false;
  return {
    read: convert(grants.read),
    write: convert(grants.write),
    net: convert(grants.net),
    env: convert(grants.env),
    run: convert(grants.run),
    ffi: false,
    sys: false,
    import: false,
  };
}

/**
 * `grants` plus what the worker's own code needs to load ({@linkcode RUNTIME_ENV}), and the
 * `programs` it may start besides the grants (ripgrep: see ripgrep.ts).
 */
export function withRuntimeNeeds(grants: Grants, programs: readonly string[] = []): Grants {
  const env = grants.env === "all" ? "all" : [...new Set([...grants.env, ...RUNTIME_ENV])];
  const run = grants.run === "all" ? "all" : [...new Set([...grants.run, ...programs])];
  return { ...grants, env, run };
}

/** How the entry module starts the child: JSON lines on stdio, or Worker messages. */
export type ServeMode = "stdio" | "worker";

/**
 * The worker's main module: a `data:` URL that statically imports child.ts and the handler
 * module (which must export `handleToolCall`) and starts serving. Static imports need no read
 * permission, where a dynamic import of the handler would.
 */
export function entryModuleUrl(handlerUrl: URL, mode: ServeMode): string {
  const childUrl = sourceUrl("src/sandbox/worker/child.ts").href;
  const serve = mode === "stdio" ? "serveStdio" : "serveWorkerScope";
  const source = `import { ${serve} } from ${JSON.stringify(childUrl)};\n` +
    `import { handleToolCall } from ${JSON.stringify(handlerUrl.href)};\n` +
    `await ${serve}(handleToolCall);\n`;
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/** Options for {@linkcode workerRunArgs}. */
export interface WorkerRunOptions {
  /** The profile's grants; {@linkcode RUNTIME_ENV} is added. */
  grants: Grants;
  /** Paths never writable, whatever the grants (see {@linkcode denoFlags}). */
  denyWrite?: readonly string[];
  /** Programs (absolute paths) the worker may start besides the grants. */
  programs?: readonly string[];
  /** The handler module (exports `handleToolCall`). */
  handlerUrl: URL;
  /**
   * The deno.json whose import map resolves tern's bare imports, whatever the worker's cwd;
   * null runs with `--no-config`. Default: {@linkcode defaultConfigPath}.
   */
  configPath?: string | null;
}

/**
 * The arguments after the deno executable that start a process worker:
 * `run <permission flags> --quiet --cached-only --no-remote --config <file> <entry>`. A packaged
 * tern (src/core/packaging.ts) starts its own entry instead, which serves tern's own handler
 * whatever `handlerUrl` says: `run <permission flags> … --no-config dist/tern.js --tern-entry
 * tool-worker` for the single file, `--tern-entry tool-worker` after a compiled binary (which
 * runs with the permissions it was compiled with).
 * `--cached-only` and `--no-remote` keep the child from downloading anything. The lockfile
 * next to the config is used as the main process uses it: with it, npm packages resolve from
 * `node_modules` even with an empty DENO_DIR (with `--no-lock` they need registry metadata,
 * which `--cached-only` may not have).
 * Under a Deno workspace above the config's folder (`workspaceAbove`), the tree's worker runs
 * with `--no-config --no-lock` instead, as every other entry does (`entryArgv`): Deno would load
 * it as one of that workspace's members, whose `links` may replace the packages it imports.
 * It then fails to start, and its host says so.
 */
export function workerRunArgs(options: WorkerRunOptions): string[] {
  const configPath = options.configPath === undefined ? defaultConfigPath() : options.configPath;
  const config = configPath === null
    ? ["--no-config"]
    : workspaceAbove(configPath) !== null
    ? ["--no-config", "--no-lock"]
    : ["--config", configPath];
  const flags = [
    ...denoFlags(withRuntimeNeeds(options.grants, options.programs), options.denyWrite),
    "--quiet",
    "--cached-only",
    "--no-remote",
    ...config,
  ];
  const packaged = packaging().kind;
  // A compiled binary takes no Deno flags: its worker gets them as arguments and gives up the
  // kinds of access they do not grant (ungrantedKinds).
  if (packaged === "compiled") return entryArgv("tool-worker", flags, flags).slice(1);
  if (packaged === "single-file") return entryArgv("tool-worker", flags, []).slice(1);
  return ["run", ...flags, entryModuleUrl(options.handlerUrl, "stdio")];
}

/**
 * tern's own deno.json (at the repository root, also for the code of `.tools/bundle/`) when this
 * code runs from files on disk and the file exists; null otherwise (a packaged build: see
 * src/core/packaging.ts).
 */
export function defaultConfigPath(): string | null {
  if (packaging().kind !== "tree") return null;
  const url = sourceUrl("deno.json");
  if (url.protocol !== "file:") return null;
  try {
    const path = fileUrlToPath(url);
    return Deno.statSync(path).isFile ? path : null;
  } catch {
    return null;
  }
}

/** The kinds of access a Deno process can give up for good (`Deno.permissions.revoke`). */
const REVOCABLE = ["read", "write", "net", "env", "run", "sys", "ffi"] as const;

/**
 * The kinds of access `flags` (from {@linkcode denoFlags}) grant nothing of: what a worker
 * started as a compiled binary, which runs with the binary's own permissions, revokes before it
 * loads any tool. Deno revokes a kind only as a whole, so a kind granted in part stays as the
 * binary has it (the bubblewrap view still limits the files it reaches).
 */
export function ungrantedKinds(flags: readonly string[]): Deno.PermissionName[] {
  return REVOCABLE.filter((kind) =>
    !flags.some((flag) => flag === `--allow-${kind}` || flag.startsWith(`--allow-${kind}=`))
  );
}
