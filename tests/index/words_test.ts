import { deepEqual } from "node:assert/strict";
import { EMBEDDING_DIMENSIONS, embedWords } from "../../src/index/embed.ts";
import { splitWords } from "../../src/index/words.ts";

// The definitions splitWords() and embedWords() must match: the Unicode regexes, and FNV-1a
// over the feature strings.
const RUN = /[\p{L}\p{N}]+/gu;
const CAMEL = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{N}]+/gu;

function referenceSplit(text: string): string[] {
  const words: string[] = [];
  for (const run of text.match(RUN) ?? []) {
    for (const part of run.match(CAMEL) ?? []) words.push(part.toLowerCase());
  }
  return words;
}

function referenceHash(text: string): number {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

function referenceEmbed(words: string[], dimensions = EMBEDDING_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  const add = (feature: string, weight: number) => {
    const value = referenceHash(feature);
    vector[value % vector.length] += value & 0x80000000 ? -weight : weight;
  };
  for (const word of words) {
    add(`w:${word}`, 1);
    const padded = `^${word}$`;
    for (let i = 0; i + 3 <= padded.length; i++) add(padded.slice(i, i + 3), 0.5);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) { for (let i = 0; i < vector.length; i++) vector[i] /= norm; }
  return vector;
}

const TRICKY = [
  "",
  " ",
  "_",
  "a",
  "A",
  "7",
  "parseArgs parse_args HTTPServer2 kebab-case Über",
  "XMLHttpRequest getURLForID iOS ABCdef ABC A1B2c3 aB AB Ab a1 1a HTTP2Server",
  "toISOString __proto__ $scope x86_64 utf-8 0x1F 3.14e10 v2.0.1-rc1",
  "caféBar naïveÜber ÉCOLEnormale straßeGROSS İstanbul ǅungla ǈ ǋx",
  "日本語のtextMixed 中文abc abc中文 한국어Word ʻokina ߟ",
  "emoji 😀 face😀Face 𝒜lpha 𝟘𝟙digits 😀a",
  "dashes — and «quotes» and non‑breaking\u00a0space and\u2028lines",
  "١٢٣ Arabic digits ٣abc and Ⅻ roman Ⅻabc",
  "lone \ud800 surrogate \udc00 here a\ud83dB",
  "ﬁle ligature ΣΊΣΥΦΟΣ σίσυφος ΑβΓ",
  "tab\tnew\nline\r\nCRLF",
];

/** Random text over ASCII, Latin-1, other scripts, astral characters and lone surrogates. */
function randomTexts(count: number): string[] {
  const alphabet = [
    ..."aZbY09_- .$/\\(){}é",
    ..."ÜßİǅΣσ中ʻ١Ⅻ—\u00a0",
    "😀",
    "𝒜",
    "\ud800",
    "\udc00",
  ];
  let seed = 22;
  const next = () => (seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5 >>> 0);
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let text = "";
    for (let length = next() % 24; length > 0; length--) text += alphabet[next() % alphabet.length];
    out.push(text);
  }
  return out;
}

Deno.test("splitWords() gives the words of the Unicode regexes on tricky and random text", () => {
  for (const text of [...TRICKY, ...randomTexts(5_000)]) {
    deepEqual(splitWords(text), referenceSplit(text), JSON.stringify(text));
  }
});

Deno.test("embedWords() gives the vectors of hashing the feature strings, bit for bit", () => {
  const texts = [...TRICKY, ...randomTexts(500)];
  for (const text of texts) {
    const words = referenceSplit(text);
    deepEqual(embedWords(words), referenceEmbed(words), JSON.stringify(text));
    deepEqual(embedWords(words, 64), referenceEmbed(words, 64), JSON.stringify(text));
    deepEqual(embedWords(words, 100), referenceEmbed(words, 100), JSON.stringify(text));
    deepEqual(embedWords(words, 1), referenceEmbed(words, 1), JSON.stringify(text));
  }
  // Words splitWords() never gives: empty, one or two code units, lone surrogates, symbols.
  const odd = ["", "a", "ab", "\ud800", "\udc00x", "w:", "^$", "a b", "😀", "𝒜lpha"];
  deepEqual(embedWords(odd), referenceEmbed(odd));
  deepEqual(embedWords([]), referenceEmbed([]));
});
