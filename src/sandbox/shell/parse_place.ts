/**
 * Where parse.ts parses a command line that is not plain: in this process (library callers and
 * tests), or in the shell parser process (parser_process.ts), which tern's own command line
 * chooses as it starts. A module of its own, so choosing loads nothing of the analysis.
 */

let apart = false;

/**
 * Makes every later parse run in the shell parser process, never in this one. There
 * tree-sitter's memory (about 19 MB once its wasm is compiled) stays out of tern's process, a
 * parse that runs away is killed at its deadline, and tern's main thread goes on meanwhile.
 */
export function parseInShellParserProcess(): void {
  apart = true;
}

/** Whether parses run in the shell parser process. */
export function parsesApart(): boolean {
  return apart;
}
