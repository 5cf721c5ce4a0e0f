/**
 * The stored embeddings, read once into one normalised matrix and kept in memory until the
 * database changes, so a search compares the query with every chunk without reading every row
 * again. Private to src/index/.
 */
import type { DatabaseSync } from "node:sqlite";

/** Above this many chunks, search compares embeddings only for full-text matches. */
export const FULL_VECTOR_SCAN_LIMIT = 20_000;

/** A blob as a Float32Array (copied: a blob's bytes need not be aligned for a view). */
export function toVector(blob: Uint8Array): Float32Array {
  return new Float32Array(blob.slice().buffer);
}

/** A Float32Array as a blob's bytes. */
export function toBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** Embeddings as rows of one matrix, each of length 1 (or all zeros). */
export interface VectorMatrix {
  seqs: number[];
  /** Row of each seq. */
  rowOf: Map<number, number>;
  dims: number;
  data: Float32Array;
}

/**
 * The matrix of `rows`. Empty rows (a file the agent's index refreshed without an endpoint's
 * vectors) and rows of another length than the first other one (written by another embedding)
 * are left out: they say nothing about a query of this one.
 */
export function matrixOf(rows: { seq: number; vector: Uint8Array }[]): VectorMatrix {
  const vectors = rows.map((row) => ({ seq: Number(row.seq), vector: toVector(row.vector) }));
  const dims = vectors.find(({ vector }) => vector.length > 0)?.vector.length ?? 0;
  const kept = vectors.filter(({ vector }) => vector.length === dims);
  const data = new Float32Array(kept.length * dims);
  kept.forEach(({ vector }, row) => data.set(normalised(vector), row * dims));
  const seqs = kept.map(({ seq }) => seq);
  return { seqs, rowOf: new Map(seqs.map((seq, row) => [seq, row])), dims, data };
}

function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((value) => value * scale);
}

/**
 * The cosine of `query` with each row (0 for all when the lengths differ), and the rows of the
 * `top` highest, best first.
 */
export function nearest(
  matrix: VectorMatrix,
  query: Float32Array,
  top: number,
): { cosines: Float32Array; best: number[] } {
  const { dims, data } = matrix;
  const count = matrix.seqs.length;
  const cosines = new Float32Array(count);
  if (query.length !== dims || count === 0) return { cosines, best: [] };
  const q = normalised(query);
  for (let row = 0, offset = 0; row < count; row++, offset += dims) {
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += q[i] * data[offset + i];
    cosines[row] = dot;
  }
  // The `top` best by a bounded insertion list: far fewer moves than sorting every row.
  const best: number[] = [];
  for (let row = 0; row < count; row++) {
    const value = cosines[row];
    if (best.length === top && value <= cosines[best[top - 1]]) continue;
    let at = best.length === top ? top - 1 : best.length;
    while (at > 0 && cosines[best[at - 1]] < value) at--;
    best.splice(at, 0, row);
    if (best.length > top) best.pop();
  }
  return { cosines, best };
}

/** Every embedding as a matrix, cached per `PRAGMA data_version` (other connections' commits). */
export class VectorCache {
  #version = -1;
  #matrix: VectorMatrix | undefined;

  /**
   * All embeddings, or undefined when there are more than FULL_VECTOR_SCAN_LIMIT. Call inside a
   * read transaction so the version and the rows are one snapshot.
   */
  all(db: DatabaseSync): VectorMatrix | undefined {
    const version = Number(
      (db.prepare("PRAGMA data_version").get() as { data_version: number }).data_version,
    );
    if (version === this.#version) return this.#matrix;
    const count = Number(
      (db.prepare("SELECT count(*) AS n FROM embeddings").get() as { n: number }).n,
    );
    this.#matrix = count > FULL_VECTOR_SCAN_LIMIT ? undefined : matrixOf(
      db.prepare("SELECT seq, vector FROM embeddings").all() as {
        seq: number;
        vector: Uint8Array;
      }[],
    );
    this.#version = version;
    return this.#matrix;
  }

  /** Forgets the cache: this connection wrote (data_version only counts other connections). */
  clear(): void {
    this.#version = -1;
    this.#matrix = undefined;
  }
}
