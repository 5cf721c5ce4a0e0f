/**
 * The start of bin/compile's packaged builds (`dist/tern.js`, `dist/tern`): bin/compile writes
 * a small entry module that calls {@linkcode startSingleFile} with the files the build carries
 * (tree-sitter's wasm, base64) and the Deno flags it runs with. `--tern-entry <name>` as the
 * first argument runs one of tern's own parts that run on their own (src/core/packaging.ts);
 * anything else is tern's command line, as main.ts reads it.
 */
import { fileURLToPath } from "node:url";
import {
  ENTRY_FLAG,
  type EntryName,
  isEntryName,
  isThreadName,
  packaging,
  setPackaging,
  THREAD_NAME_PREFIX,
  type ThreadName,
} from "../core/packaging.ts";
import { buildKind } from "../version.ts";

/** What bin/compile's entry module hands over. */
export interface SingleFileBuild {
  /** The entry module's own URL (`import.meta.url`): the file, or a compiled binary's module. */
  moduleUrl: string;
  /** The Deno flags `dist/tern.js` runs with (its first line), given again to a subagent. */
  runFlags: readonly string[];
  /** Files carried inside the build, name → base64. */
  files: Record<string, string>;
}

/** Records the packaging, then runs the entry `--tern-entry` names or tern's command line. */
export async function startSingleFile(build: SingleFileBuild): Promise<void> {
  setPackaging(
    buildKind(build.moduleUrl) === "compiled" ? { kind: "compiled", moduleUrl: build.moduleUrl } : {
      kind: "single-file",
      file: fileURLToPath(build.moduleUrl),
      runFlags: withRunWrites(build.runFlags),
    },
    build.files,
  );
  // A Worker thread the build started from itself (startThread()): its name says which part.
  const thread = threadOf(globalThis as { name?: unknown });
  if (thread !== undefined) {
    await runThread(thread);
    return;
  }
  if (Deno.args[0] !== ENTRY_FLAG) {
    await import("../../main.ts");
    return;
  }
  const name = Deno.args[1] ?? "";
  if (!isEntryName(name)) {
    console.error(`Cannot start the entry "${name}": tern has no part of that name`);
    Deno.exit(2);
  }
  await runEntry(name);
}

/**
 * `flags` with the folders tern's process may write worked out for this run, as bin/_env.sh does
 * for bin/tern (tern's home, the temp folder, the workspace's `.tern/memory`): the flags written
 * into the build are the builder's, and a subagent started with them could not write the home
 * of whoever runs it.
 */
export function withRunWrites(
  flags: readonly string[],
  env: (name: string) => string | undefined = readVariable,
  cwd: string | undefined = readCwd(),
): string[] {
  // Empty is unset, as for bash's `${TERN_HOME:-…}` and tern's own resolveTernHome.
  const set = (name: string) => env(name) || undefined;
  const absolute = (path: string) =>
    path.startsWith("/") || cwd === undefined ? path : `${cwd}/${path}`;
  const home = absolute(set("TERN_HOME") ?? `${set("HOME") ?? "/nonexistent"}/.tern`);
  const tmp = set("TMPDIR") ?? "/tmp";
  // A current folder that cannot be named (its path is not UTF-8) is no workspace: the command
  // line refuses it (current_dir.ts), so it gets no memory folder here.
  const memory = cwd === undefined ? [] : [`${cwd}/.tern/memory`];
  // Deno splits the list at commas: a folder with one in its name is left out (its writes
  // fail), never granted as the parts the commas cut it into.
  const writes = [home, tmp, ...memory].filter((path) => !path.includes(","));
  return flags.map((flag) =>
    flag.startsWith("--allow-write=") ? `--allow-write=${writes.join(",")}` : flag
  );
}

/** The current folder, or undefined when it has no path Deno can give (not UTF-8). */
function readCwd(): string | undefined {
  try {
    return Deno.cwd();
  } catch {
    return undefined;
  }
}

function readVariable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The thread part a Worker's name asks for; undefined in the main thread (which has no name). */
function threadOf(scope: { name?: unknown }): ThreadName | undefined {
  const inWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
    "undefined";
  if (!inWorker || typeof scope.name !== "string") return undefined;
  if (!scope.name.startsWith(THREAD_NAME_PREFIX)) return undefined;
  const name = scope.name.slice(THREAD_NAME_PREFIX.length);
  return isThreadName(name) ? name : undefined;
}

/** Each thread part's module, imported (and so run) only when asked for. */
async function runThread(name: ThreadName): Promise<void> {
  switch (name) {
    case "index-worker":
      await import("../harness/code_index_worker.ts");
      return;
  }
}

/** Each entry's module, imported (and so run) only when asked for. */
async function runEntry(name: EntryName): Promise<void> {
  switch (name) {
    case "tool-worker": {
      if (packaging().kind === "compiled") {
        const { ungrantedKinds } = await import("../sandbox/worker/flags.ts");
        for (const kind of ungrantedKinds(Deno.args.slice(2))) {
          Deno.permissions.revokeSync({ name: kind });
        }
      }
      const [{ serveStdio }, { handleToolCall }] = await Promise.all([
        import("../sandbox/worker/child.ts"),
        import("../tools/worker_handler.ts"),
      ]);
      await serveStdio(handleToolCall);
      return;
    }
    case "net-proxy":
      await import("../sandbox/net_proxy_main.ts");
      return;
    case "net-forwarder":
      await import("../sandbox/net_forwarder.ts");
      return;
    case "rewind-restore":
      await import("../harness/rewind/restore_main.ts");
      return;
    case "web-request":
      await import("../tools/web_request_main.ts");
      return;
    case "index-parser":
      await import("../harness/code_index_parser_main.ts");
      return;
    case "shell-parser":
      await import("../sandbox/shell/parser_main.ts");
      return;
  }
}
