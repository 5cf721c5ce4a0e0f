/** How deeply a JSONC file tern reads may nest arrays and objects. */
import type { createScanner, SyntaxKind } from "jsonc-parser";

/**
 * Arrays and objects inside one another at most this deep in a JSONC file: far more than any
 * real file needs (a config file's deepest setting is a few levels), far less than what
 * overflows jsonc-parser's recursive `parseTree` and `getNodeValue` or a schema's check.
 */
export const MAX_JSONC_DEPTH = 64;

// jsonc-parser's `SyntaxKind` is a const enum, which isolated modules cannot read: its values.
const OPEN_BRACE = 1 as SyntaxKind;
const CLOSE_BRACE = 2 as SyntaxKind;
const OPEN_BRACKET = 3 as SyntaxKind;
const CLOSE_BRACKET = 4 as SyntaxKind;
const EOF = 17 as SyntaxKind;

/**
 * The offset in JSONC `text` of the first `[` or `{` that opens a level deeper than `max`;
 * undefined when none does. Reads tokens with jsonc-parser's scanner (passed in, as callers load
 * it lazily), without recursion, so any text is safe to check before it is parsed; brackets in
 * strings and comments do not count. Never throws.
 */
export function deeperThanAt(
  jsonc: { createScanner: typeof createScanner },
  text: string,
  max: number = MAX_JSONC_DEPTH,
): number | undefined {
  const scanner = jsonc.createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      if (++depth > max) return scanner.getTokenOffset();
    } else if ((token === CLOSE_BRACE || token === CLOSE_BRACKET) && depth > 0) {
      depth--;
    }
  }
  return undefined;
}
