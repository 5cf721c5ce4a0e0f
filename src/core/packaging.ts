/**
 * How the running tern is packaged, and how it starts its parts that run on their own (the tool
 * worker, the network proxy and forwarder, the restore, web request, code index parser and
 * shell parser processes: "entries").
 *
 * - `tree`: main.ts or bin/build's code-split bundle beside the source tree; an entry runs as
 *   `deno run <flags> <its source file>` (or, for the tool worker, a `data:` module importing
 *   its source files: see src/sandbox/worker/flags.ts).
 * - `single-file`: bin/compile's `dist/tern.js`, one JavaScript file holding everything; an
 *   entry runs as `deno run <flags> dist/tern.js --tern-entry <name> <args>`.
 * - `compiled`: bin/compile's `dist/tern` (`deno compile`); an entry runs as the same
 *   executable, `dist/tern --tern-entry <name> <args>`: a compiled binary takes no Deno flags,
 *   its permissions are those it was compiled with.
 *
 * The packaged builds start through src/cli/single_file_main.ts, which calls
 * {@linkcode setPackaging} before anything else runs and serves `--tern-entry`. Files read at
 * run time (tree-sitter's wasm) travel inside them: {@linkcode embeddedFile}.
 */
import { fileUrlToPath, pathToFileUrl } from "./file_url.ts";
import { sourceUrl } from "./source_url.ts";

/** How the running tern is packaged (see the module comment). */
export type Packaging =
  | { kind: "tree" }
  | { kind: "single-file"; file: string; runFlags: readonly string[] }
  | { kind: "compiled"; moduleUrl?: string };

/** The hidden first argument that makes a packaged tern run one of its entries. */
export const ENTRY_FLAG = "--tern-entry";

/** The parts of tern that run in their own process, with their source files. */
export const ENTRY_SOURCES = {
  "tool-worker": "src/sandbox/worker/child.ts",
  "net-proxy": "src/sandbox/net_proxy_main.ts",
  "net-forwarder": "src/sandbox/net_forwarder.ts",
  "rewind-restore": "src/harness/rewind/restore_main.ts",
  "web-request": "src/tools/web_request_main.ts",
  "index-parser": "src/harness/code_index_parser_main.ts",
  "shell-parser": "src/sandbox/shell/parser_main.ts",
} as const;

/** The name of an entry. */
export type EntryName = keyof typeof ENTRY_SOURCES;

/** The parts of tern that run as Worker threads of a process, with their source files. */
export const THREAD_SOURCES = {
  "index-worker": "src/harness/code_index_worker.ts",
} as const;

/** The name of a thread part. */
export type ThreadName = keyof typeof THREAD_SOURCES;

/**
 * A packaged build's Worker threads start from the build's own module; their Worker name, this
 * prefix and the part's name, tells its entry (src/cli/single_file_main.ts) which part to run.
 */
export const THREAD_NAME_PREFIX = "tern-thread:";

/** Whether `name` is a thread part's name. */
export function isThreadName(name: string): name is ThreadName {
  return Object.hasOwn(THREAD_SOURCES, name);
}

/**
 * Starts the thread part `name` as a module Worker with this process's permissions: its source
 * file from the tree, the build's own module (named for the part) when packaged.
 */
export function startThread(name: ThreadName): Worker {
  const packaged = current;
  const url = packaged.kind === "single-file"
    ? pathToFileUrl(packaged.file).href
    : packaged.kind === "compiled" && packaged.moduleUrl !== undefined
    ? packaged.moduleUrl
    : packaged.kind === "tree"
    ? sourceUrl(THREAD_SOURCES[name]).href
    : undefined;
  if (url === undefined) {
    throw new Error(`Cannot start the ${name} thread: this build has no module to start it from`);
  }
  return new Worker(url, { type: "module", name: `${THREAD_NAME_PREFIX}${name}` });
}

let current: Packaging = { kind: "tree" };
let embedded: Readonly<Record<string, string>> = {};

/**
 * Records how this tern is packaged and the files it carries (name → gzipped, base64). Called once,
 * by the packaged build's entry, before tern's own code runs.
 */
export function setPackaging(packaging: Packaging, files: Record<string, string> = {}): void {
  current = packaging;
  embedded = { ...files };
}

/** How the running tern is packaged. */
export function packaging(): Packaging {
  return current;
}

/** Whether `name` is an entry's name. */
export function isEntryName(name: string): name is EntryName {
  return Object.hasOwn(ENTRY_SOURCES, name);
}

/** Whether the packaged build carries the file `name` (never, when running from the tree). */
export function carries(name: string): boolean {
  return Object.hasOwn(embedded, name);
}

/**
 * The bytes of the file `name` (e.g. `"tree-sitter-bash.wasm"`) the packaged build carries
 * (gzipped, base64); null when it carries none of that name (always, when running from the tree).
 */
export async function embeddedFile(name: string): Promise<Uint8Array | null> {
  if (!Object.hasOwn(embedded, name)) return null;
  const bytes = Uint8Array.fromBase64(embedded[name]);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The options of web-tree-sitter's `Parser.init`: the wasm runtime's bytes when the packaged
 * build carries them (`tree-sitter.wasm`), else none (it reads the file beside its module).
 */
export async function wasmRuntimeOptions(): Promise<{ wasmBinary: Uint8Array } | undefined> {
  const wasmBinary = await embeddedFile("tree-sitter.wasm");
  return wasmBinary === null ? undefined : { wasmBinary };
}

/** The arguments of the running entry: `Deno.args` without `--tern-entry <name>`. */
export function entryArgs(): string[] {
  return Deno.args[0] === ENTRY_FLAG ? Deno.args.slice(2) : [...Deno.args];
}

/**
 * The command line that starts the entry `name` with `args`: `denoPath run <denoFlags> …` for
 * the tree and the single file (`denoFlags` should carry no `--config` there: the single file
 * needs none), the same executable for a compiled binary (which ignores `denoFlags`). From the
 * tree, under a Deno workspace above the checkout ({@linkcode workspaceAbove}), a `--config`
 * becomes `--no-config`: Deno would load the entry as one of the workspace's members, so it
 * loads nothing of a config and fails to start (its callers say it did not start).
 */
export function entryArgv(
  name: EntryName,
  denoFlags: readonly string[],
  args: readonly string[],
  denoPath: string = Deno.execPath(),
): string[] {
  const packaged = current;
  if (packaged.kind === "compiled") return [Deno.execPath(), ENTRY_FLAG, name, ...args];
  if (packaged.kind === "single-file") {
    return [denoPath, "run", ...denoFlags, packaged.file, ENTRY_FLAG, name, ...args];
  }
  const source = fileUrlToPath(sourceUrl(ENTRY_SOURCES[name]));
  const at = denoFlags.indexOf("--config");
  const flags = at >= 0 && workspaceAbove(denoFlags[at + 1] ?? "") !== null
    ? [...denoFlags.slice(0, at), "--no-config", "--no-lock", ...denoFlags.slice(at + 2)]
    : denoFlags;
  return [denoPath, "run", ...flags, source, ...args];
}

/**
 * The deno.json or deno.jsonc in a folder above the one of `config` (tern's deno.json) that
 * names a Deno workspace, else null. Deno loads a project as a member of such a workspace
 * whatever `--config` says, and the workspace's `links` put folders of its own in place of the
 * npm packages the project imports: bin/tern refuses to start under one, and a file planted
 * during a run (in a workspace that holds the checkout) must not start tern's parts so either
 * ({@linkcode entryArgv}).
 * Each folder above, as named and by its real path; a file over 1 MiB counts as naming one.
 */
export function workspaceAbove(config: string): string | null {
  const checkout = parentOf(config);
  const folders = new Set(foldersAbove(checkout));
  try {
    for (const dir of foldersAbove(Deno.realPathSync(checkout))) folders.add(dir);
  } catch {
    // A checkout that cannot be resolved: the folders as named.
  }
  for (const dir of folders) {
    for (const name of ["deno.json", "deno.jsonc"]) {
      const file = `${dir === "/" ? "" : dir}/${name}`;
      if (namesWorkspace(file)) return file;
    }
  }
  return null;
}

/**
 * The folder the absolute `path` is in (`/` for one directly under it). No path module: this
 * file loads in processes started without tern's import map (the network proxy).
 */
function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/** The folders above the absolute folder `dir`, nearest first, `/` last. */
function foldersAbove(dir: string): string[] {
  const folders: string[] = [];
  while (dir !== "/" && dir.includes("/")) {
    dir = parentOf(dir);
    folders.push(dir);
  }
  return folders;
}

/** Whether `file` is a regular file that names a workspace (or is too large to tell). */
function namesWorkspace(file: string): boolean {
  try {
    const info = Deno.statSync(file);
    if (!info.isFile) return false;
    return info.size > 1024 * 1024 || Deno.readTextFileSync(file).includes('"workspace');
  } catch {
    return false;
  }
}

/**
 * The command that starts another tern like this one (a subagent's `tern child`): bin/tern
 * from the tree (`launcher`), the same file with the same Deno flags for the single file, the
 * same executable when compiled.
 */
export function ternCommand(launcher: () => string): { command: string; args: string[] } {
  const packaged = current;
  if (packaged.kind === "compiled") return { command: Deno.execPath(), args: [] };
  if (packaged.kind === "single-file") {
    return { command: Deno.execPath(), args: ["run", ...packaged.runFlags, packaged.file] };
  }
  return { command: launcher(), args: [] };
}
