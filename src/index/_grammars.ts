/**
 * Loads tree-sitter grammars for the chunker: the wasm runtime once per process, each grammar
 * once, lazily, on the first file of its language. The runtime's memory is capped at
 * {@link WASM_MEMORY_MAX_BYTES}; what it would print (an `Aborted()`) is dropped.
 */
import type { Language, Parser } from "web-tree-sitter";
import { carries, embeddedFile, packaging, wasmRuntimeOptions } from "../core/packaging.ts";

export type { Language, Node, Tree } from "web-tree-sitter";

/**
 * The most memory tree-sitter's wasm runtime may take: an allocation past it aborts the
 * runtime (which then stays unusable in this isolate) instead of growing to wasm's 2 GiB. The
 * largest file indexed (1 MiB of source) takes about 56 MiB.
 */
export const WASM_MEMORY_MAX_BYTES = 256 * 1024 * 1024;
const WASM_PAGE = 64 * 1024;
const WASM_MEMORY_INITIAL_BYTES = 32 * 1024 * 1024;

let runtime: Promise<typeof import("web-tree-sitter")> | undefined;
let memory: WebAssembly.Memory | undefined;
const languages = new Map<string, Promise<Language>>();
/** One parser per grammar: calls that overlap (a worker's first files) never switch one's language. */
const parsers = new Map<string, Parser>();

/**
 * The parser of the grammar `name` (e.g. "typescript"). It is this grammar's own: a caller
 * that awaited it while another loaded a second grammar still parses with the one it asked for.
 */
export async function parserFor(name: string): Promise<Parser> {
  const language = await loadLanguage(name);
  const treeSitter = await loadRuntime();
  let parser = parsers.get(name);
  if (!parser) {
    parser = new treeSitter.Parser();
    parser.setLanguage(language);
    parsers.set(name, parser);
  }
  return parser;
}

/** How many bytes the wasm runtime's memory has grown to (it never shrinks); 0 before it loads. */
export function runtimeMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}

function loadRuntime(): Promise<typeof import("web-tree-sitter")> {
  runtime ??= import("web-tree-sitter").then(async (module) => {
    memory = new WebAssembly.Memory({
      initial: WASM_MEMORY_INITIAL_BYTES / WASM_PAGE,
      maximum: WASM_MEMORY_MAX_BYTES / WASM_PAGE,
    });
    const silent = () => {};
    await module.Parser.init(
      {
        ...await wasmRuntimeOptions(),
        wasmMemory: memory,
        print: silent,
        printErr: silent,
      } as Parameters<typeof module.Parser.init>[0],
    );
    return module;
  }).catch((error) => {
    runtime = undefined;
    throw new Error("Cannot start tree-sitter: the wasm runtime failed to load", { cause: error });
  });
  return runtime;
}

function loadLanguage(name: string): Promise<Language> {
  let loading = languages.get(name);
  if (!loading) {
    loading = loadRuntime().then(async ({ Language }) => {
      return Language.load(await grammarBytes(name));
    }).catch((error) => {
      languages.delete(name);
      throw new Error(`Cannot load the ${name} grammar: ${error.message ?? error}`, {
        cause: error,
      });
    });
    languages.set(name, loading);
  }
  return loading;
}

/** Whether this tern has the grammar `name` (a packaged build carries those bin/compile put in). */
export function grammarCarried(name: string): boolean {
  return packaging().kind === "tree" || carries(`tree-sitter-${name}.wasm`);
}

/**
 * The wasm of the grammar `name`: from @vscode/tree-sitter-wasm, or carried by a packaged build
 * (bin/compile puts in every grammar of @vscode/tree-sitter-wasm).
 */
async function grammarBytes(name: string): Promise<Uint8Array> {
  const file = `tree-sitter-${name}.wasm`;
  const carried = await embeddedFile(file);
  if (carried !== null) return carried;
  if (packaging().kind !== "tree") {
    throw new Error(`this ${packaging().kind} build of tern carries no ${file}`);
  }
  return await Deno.readFile(new URL(import.meta.resolve(`@vscode/tree-sitter-wasm/wasm/${file}`)));
}
