/**
 * Identifier-aware word splitting, shared by the store's full-text index, the query side and the
 * local embedding, so `parseArgs`, `parse_args` and "parse the args" meet on the same words.
 */

const RUN = /[\p{L}\p{N}]+/gu;
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

/** ASCII classes by code unit: 1 upper, 2 lower, 3 digit, 0 anything else below 128. */
const UPPER = 1, LOWER = 2, DIGIT = 3;
const ASCII = new Uint8Array(128);
for (let c = 65; c <= 90; c++) ASCII[c] = UPPER;
for (let c = 97; c <= 122; c++) ASCII[c] = LOWER;
for (let c = 48; c <= 57; c++) ASCII[c] = DIGIT;

/**
 * The lowercase words of `text`: runs of letters and digits, with camelCase, PascalCase,
 * snake_case, kebab-case and digit boundaries split (`HTTPServer2` → `http server 2`).
 */
export function splitWords(text: string): string[] {
  // Runs of ASCII letters and digits are split by scanning their code units; a run with any
  // other character goes through the Unicode regexes, which define the result.
  const words: string[] = [];
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code < 128) {
      if (ASCII[code] === 0) {
        i++;
        continue;
      }
      let end = i + 1;
      while (end < length) {
        const next = text.charCodeAt(end);
        if (next >= 128 || ASCII[next] === 0) break;
        end++;
      }
      if (end === length || text.charCodeAt(end) < 128) {
        splitAsciiRun(text, i, end, words);
        i = end;
        continue;
      }
    }
    // A run (or a gap) with characters beyond ASCII: the next run from here, by the regexes.
    RUN.lastIndex = i;
    const run = RUN.exec(text);
    if (!run) break;
    for (const part of run[0].match(CAMEL) ?? []) words.push(part.toLowerCase());
    i = run.index + run[0].length;
  }
  return words;
}

/** CAMEL's split of the ASCII letters and digits `text[start, end)`, pushed onto `words`. */
function splitAsciiRun(text: string, start: number, end: number, words: string[]): void {
  let i = start;
  while (i < end) {
    const kind = ASCII[text.charCodeAt(i)];
    let stop = i + 1;
    while (stop < end && ASCII[text.charCodeAt(stop)] === kind) stop++;
    if (kind === UPPER && stop < end && ASCII[text.charCodeAt(stop)] === LOWER) {
      // `HTTPServer`: the capitals but the last are a word, which starts the next one.
      if (stop - i > 1) stop--;
      else {
        while (stop < end && ASCII[text.charCodeAt(stop)] === LOWER) stop++;
      }
    }
    const word = text.slice(i, stop);
    words.push(kind === LOWER || kind === DIGIT ? word : word.toLowerCase());
    i = stop;
  }
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
