/**
 * Identifier-aware word splitting, shared by the store's full-text index, the query side and the
 * local embedding, so `parseArgs`, `parse_args` and "parse the args" meet on the same words.
 */

const RUN = /[\p{L}\p{N}]+/gu;
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

/**
 * The lowercase words of `text`: runs of letters and digits, with camelCase, PascalCase,
 * snake_case, kebab-case and digit boundaries split (`HTTPServer2` → `http server 2`).
 */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const run of text.match(RUN) ?? []) {
    for (const part of run.match(CAMEL) ?? []) words.push(part.toLowerCase());
  }
  return words;
}

/** The words of an identifier joined without separators: `parse_args` and `parseArgs` → `parseargs`. */
export function identifierKey(name: string): string {
  return splitWords(name).join("");
}

const STOP_WORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "at",
  "by",
  "does",
  "do",
  "for",
  "from",
  "how",
  "in",
  "is",
  "it",
  "of",
  "on",
  "or",
  "the",
  "this",
  "to",
  "what",
  "where",
  "which",
  "who",
  "with",
]);

/** The distinct words of a query, without common English words unless nothing else is left. */
export function queryWords(query: string): string[] {
  const all = [...new Set(splitWords(query))];
  const kept = all.filter((word) => !STOP_WORDS.has(word));
  return kept.length > 0 ? kept : all;
}
