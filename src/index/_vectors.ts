/**
 * The stored embeddings, read once and kept in memory until the database changes, so a search
 * compares the query with every chunk without reading every row again. Private to src/index/.
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

/** Every embedding by chunk seq, cached per `PRAGMA data_version` (other connections' commits). */
export class VectorCache {
  #version = -1;
  #vectors: Map<number, Float32Array> | undefined;

  /**
   * All embeddings, or undefined when there are more than FULL_VECTOR_SCAN_LIMIT. Call inside a
   * read transaction so the version and the rows are one snapshot.
   */
  all(db: DatabaseSync): Map<number, Float32Array> | undefined {
    const version = Number(
      (db.prepare("PRAGMA data_version").get() as { data_version: number })
        .data_version,
    );
    if (version === this.#version) return this.#vectors;
    const count = Number(
      (db.prepare("SELECT count(*) AS n FROM embeddings").get() as {
        n: number;
      }).n,
    );
    this.#vectors = count > FULL_VECTOR_SCAN_LIMIT ? undefined : new Map(
      (db.prepare("SELECT seq, vector FROM embeddings").all() as {
        seq: number;
        vector: Uint8Array;
      }[]).map((row) => [Number(row.seq), toVector(row.vector)]),
    );
    this.#version = version;
    return this.#vectors;
  }

  /** Forgets the cache: this connection wrote (data_version only counts other connections). */
  clear(): void {
    this.#version = -1;
    this.#vectors = undefined;
  }
}
