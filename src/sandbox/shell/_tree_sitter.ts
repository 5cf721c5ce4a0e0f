/**
 * Loads tree-sitter-bash once per process: initialising the wasm runtime is costly
 * (`bench/results/code_costs.md`). Its code too loads only then (plain command lines never
 * need it, see `_plain.ts`).
 */
import type { Parser } from "web-tree-sitter";
import { embeddedFile, wasmRuntimeOptions } from "../../core/packaging.ts";

export type { Node, Parser } from "web-tree-sitter";

let loading: Promise<Parser> | undefined;

/**
 * The shared bash parser, created on first use and cached (the same object on every call).
 * Parsing is synchronous, so one instance is safe to share. A failed load is not cached.
 */
export function loadBashParser(): Promise<Parser> {
  loading ??= createParser().catch((error) => {
    loading = undefined;
    throw new Error("Cannot load the bash grammar: tree-sitter failed to start", { cause: error });
  });
  return loading;
}

async function createParser(): Promise<Parser> {
  const { Language, Parser } = await import("web-tree-sitter");
  const bytes = await embeddedFile("tree-sitter-bash.wasm") ?? await Deno.readFile(
    new URL(import.meta.resolve("@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm")),
  );
  await Parser.init(await wasmRuntimeOptions());
  const parser = new Parser();
  parser.setLanguage(await Language.load(bytes));
  return parser;
}
