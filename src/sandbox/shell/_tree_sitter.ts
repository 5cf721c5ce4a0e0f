/**
 * The bash grammar for the analysis of commands, loaded once per process through the code
 * index's grammar loader (src/index/_grammars.ts: tree-sitter's memory capped, what it would
 * print dropped). In tern's own process it never loads: tern parses in the shell parser
 * process (parser_process.ts); its code loads only there, or where a caller parses here.
 */
import type { Parser } from "web-tree-sitter";
import { parserFor } from "../../index/_grammars.ts";

export type { Node, Parser } from "web-tree-sitter";

/**
 * The shared bash parser, created on first use and cached (the same object on every call).
 * Parsing is synchronous, so one instance is safe to share. A failed load is not cached.
 */
export function loadBashParser(): Promise<Parser> {
  return parserFor("bash");
}
