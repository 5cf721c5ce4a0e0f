/**
 * The default embedding: local, offline and deterministic. Hashed character n-grams of the
 * identifier-split words of a text, summed into a fixed-size vector and normalised, so texts that
 * share words or word stems (`parse`, `parser`, `parsing`) point the same way.
 */
import { splitWords } from "./words.ts";

/** The length of the default embedding's vectors. */
export const EMBEDDING_DIMENSIONS = 256;

/** The n-gram length over `^word$`. */
const GRAM = 3;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** FNV-1a state after the code units of `w:`, the prefix of a whole-word feature. */
const WORD_PREFIX = Math.imul(Math.imul(FNV_OFFSET ^ 0x77, FNV_PRIME) ^ 0x3a, FNV_PRIME);
const START = 0x5e; // `^`
const END = 0x24; // `$`

/**
 * The embedding of `text`: each word counts as a whole (weight 1) and by its character trigrams
 * (weight 0.5 each); the result has length 1, or is all zeros when `text` has no words.
 */
export function embedText(text: string, dimensions = EMBEDDING_DIMENSIONS): Float32Array {
  return embedWords(splitWords(text), dimensions);
}

/** {@linkcode embedText} of text already split into `words` (splitWords()). */
export function embedWords(words: string[], dimensions = EMBEDDING_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  // A feature's FNV-1a hash, as an unsigned 32-bit number, picks its slot (hash % dimensions)
  // and its sign (the top bit), so unrelated features cancel out on average instead of piling
  // up. Hashes stay signed 32-bit here: the top bit is the sign, and with dimensions a power of
  // two the low bits are the slot.
  const mask = (dimensions & (dimensions - 1)) === 0 ? dimensions - 1 : -1;
  // The features are hashed from the words' code units, FNV-1a over UTF-16 code units: the
  // whole word as `w:word` and each character trigram of `^word$`.
  for (const word of words) {
    const length = word.length;
    let value = WORD_PREFIX;
    for (let i = 0; i < length; i++) value = Math.imul(value ^ word.charCodeAt(i), FNV_PRIME);
    vector[mask >= 0 ? value & mask : (value >>> 0) % dimensions] += value < 0 ? -1 : 1;
    // Trigram i covers padded[i, i + GRAM) of padded = `^word$`, length + 2 code units.
    for (let i = 0; i + GRAM <= length + 2; i++) {
      value = FNV_OFFSET;
      for (let j = i; j < i + GRAM; j++) {
        const code = j === 0 ? START : j === length + 1 ? END : word.charCodeAt(j - 1);
        value = Math.imul(value ^ code, FNV_PRIME);
      }
      vector[mask >= 0 ? value & mask : (value >>> 0) % dimensions] += value < 0 ? -0.5 : 0.5;
    }
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) { for (let i = 0; i < vector.length; i++) vector[i] /= norm; }
  return vector;
}

/**
 * The cosine similarity of two vectors of one length, in [-1, 1]; 0 when either is all zeros.
 * Throws a RangeError when the lengths differ.
 */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) {
    throw new RangeError(`Cannot compare vectors: lengths ${a.length} and ${b.length} differ`);
  }
  let dot = 0, normA = 0, normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    normA += a[i] * a[i];
    normB += b[i] * b[i];
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
