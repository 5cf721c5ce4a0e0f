/**
 * A chunked file made ready for the store: each chunk's words for the full-text index and, for
 * the default local embedding, its vector. Pure computation, so it runs where the chunking runs
 * (a chunk worker, see chunk_pool.ts) and the store's writer only writes.
 */
import { embedWords } from "./embed.ts";
import type { ChunkedFile } from "./types.ts";
import { splitWords } from "./words.ts";

/** A chunk's full-text columns: its identifier-split words, joined by spaces. */
export interface ChunkWords {
  /** The symbol's words, then its last part's again (`Parser.parse` → `parser parse parse`). */
  symbol: string;
  signature: string;
  doc: string;
  text: string;
}

/** A chunked file with its chunks' words and, when computed here, their local embeddings. */
export interface PreparedFile {
  chunked: ChunkedFile;
  /** One per chunk, in order. */
  words: ChunkWords[];
  /**
   * The local embedding of each chunk, one after another (`chunks.length` × the dimensions),
   * in one array so that it moves between threads without a copy; absent when the vectors
   * come from elsewhere (an endpoint).
   */
  vectors?: Float32Array;
}

/**
 * The words (and, with `vectors`, the local embeddings) of `chunked`'s chunks. Each text is split
 * once, for both.
 */
export function prepareFile(chunked: ChunkedFile, vectors: boolean): PreparedFile {
  const words: ChunkWords[] = [];
  const embeddings: Float32Array[] = [];
  for (const chunk of chunked.chunks) {
    const symbol = splitWords(chunk.symbol);
    const last = splitWords(chunk.symbol.split(".").pop() ?? "");
    const signature = splitWords(chunk.signature);
    const doc = splitWords(chunk.doc);
    const text = splitWords(chunk.text);
    words.push({
      symbol: `${symbol.join(" ")} ${last.join(" ")}`,
      signature: signature.join(" "),
      doc: doc.join(" "),
      text: text.join(" "),
    });
    if (vectors) embeddings.push(embedWords([...symbol, ...signature, ...doc, ...text]));
  }
  return vectors ? { chunked, words, vectors: concat(embeddings) } : { chunked, words };
}

/** The `index`th of the vectors of `dimensions` held one after another in `all`. */
export function vectorAt(all: Float32Array, index: number, dimensions: number): Float32Array {
  return all.subarray(index * dimensions, (index + 1) * dimensions);
}

function concat(vectors: Float32Array[]): Float32Array {
  const dimensions = vectors[0]?.length ?? 0;
  const all = new Float32Array(vectors.length * dimensions);
  vectors.forEach((vector, index) => all.set(vector, index * dimensions));
  return all;
}
