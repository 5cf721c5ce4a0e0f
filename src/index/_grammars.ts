/**
 * Loads tree-sitter grammars for the chunker: the wasm runtime once per process, each grammar
 * once, lazily, on the first file of its language.
 */
import type { Language, Parser } from "web-tree-sitter";

export type { Node, Tree } from "web-tree-sitter";

let runtime: Promise<typeof import("web-tree-sitter")> | undefined;
const languages = new Map<string, Promise<Language>>();
let shared: Parser | undefined;

/** A parser set to the grammar `name` (e.g. "typescript"); the parser is shared, parse at once. */
export async function parserFor(name: string): Promise<Parser> {
  const language = await loadLanguage(name);
  const treeSitter = await loadRuntime();
  shared ??= new treeSitter.Parser();
  shared.setLanguage(language);
  return shared;
}

function loadRuntime(): Promise<typeof import("web-tree-sitter")> {
  runtime ??= import("web-tree-sitter").then(async (module) => {
    await module.Parser.init();
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
      const url = new URL(
        import.meta.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${name}.wasm`),
      );
      return Language.load(await Deno.readFile(url));
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
