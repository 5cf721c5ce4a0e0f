/**
 * The code index's store: files, chunks, relations and embeddings in one SQLite file
 * (`node:sqlite`, WAL, so one process writes while others read), with an FTS5 full-text index
 * over identifier-split words and the hybrid ranking of rank.ts.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { openDatabase } from "./_schema.ts";
import { matrixOf, nearest, toBlob, toVector, VectorCache } from "./_vectors.ts";
import { embedText } from "./embed.ts";
import { type PreparedFile, prepareFile, vectorAt } from "./prepared.ts";
import { type Candidate, DEFAULT_RANK_WEIGHTS, type Hit, rank, type RankWeights } from "./rank.ts";
import { nameTail, pathBase, symbolTail } from "./types.ts";
import type { Chunk, ChunkedFile, ChunkKind, Relation, RelationKind } from "./types.ts";
import { queryWords } from "./words.ts";

/** FTS5 column weights for bm25(): symbol, signature, doc, text. */
const COLUMN_WEIGHTS = [10, 4, 2, 1];

/**
 * A query word found in more than this share of the chunks is left out of the full-text match
 * (unless every word is): its BM25 weight is near nothing, and matching it makes FTS5 score
 * nearly every chunk.
 */
const COMMON_WORD_SHARE = 0.2;

/**
 * The most chunks one index holds (default of `IndexStore.open()`'s `maxChunks`): past it a
 * file is not stored and writePrepared() says so. At about 2 KB a chunk on disk (up to 10 KB
 * with long text) this keeps an index under a few GB; 48 MiB of blank lines once made 1.6 GB.
 */
export const INDEX_MAX_CHUNKS = 500_000;

/**
 * Points each call to an imported name (relations.target_*) at the function of that name in the
 * imported file (`<base>.<ext>` or `<base>/index.<ext>`), or at nothing when it is gone. Run for
 * the relations of a file just written and those that import it (`?` path, `?`/`?` bases).
 */
const RELINK_SET = `UPDATE relations SET to_id = (
  SELECT c.id FROM files f JOIN chunks c ON c.path = f.path
  WHERE (f.base = relations.target_base OR f.base = relations.target_base || '/index')
    AND c.symbol = relations.target_symbol AND c.kind = 'FUNCTION'
  ORDER BY f.path, c.start_line LIMIT 1)`;
/** Each a separate statement, so that each uses its index. */
const RELINK_OWN = `${RELINK_SET} WHERE path = ? AND target_base IS NOT NULL`;
const RELINK_IMPORTERS = `${RELINK_SET} WHERE target_base = ?`;

/**
 * A file's modification time (ms since the epoch) and size when its hash was taken: a file whose
 * stamp is unchanged is not read again. `mtime` null: not to be trusted (see `stamp()`).
 */
export interface FileStamp {
  mtime: number | null;
  size: number;
}

/** What the store knows of an indexed file. */
export interface KnownFile {
  hash: string;
  stamp?: FileStamp;
}

/**
 * Why a file the index read is not in it, when its content decides: binary (a NUL byte) or
 * generated (generated.ts). The index keeps such a file's stamp, so that a run does not read it
 * again while the stamp stays.
 */
export type SkipReason = "binary" | "generated";

/** A file read and skipped, with its stamp then. */
export interface SkippedFile {
  reason: SkipReason;
  stamp: FileStamp;
}

/** What `search()` takes. */
export interface SearchOptions {
  /** How many hits to return (default 10). */
  limit?: number;
  weights?: RankWeights;
  /** The query's embedding when the chunks' come from an endpoint (default: the store's own). */
  queryVector?: Float32Array;
}

/** Which relations `relations()` returns; the fields given must all match. */
export interface RelationFilter {
  kind?: RelationKind;
  /** The source chunk's id (what does X call / import / extend). */
  from?: string;
  /** The target chunk's id (who calls / implements X). */
  to?: string;
  /** The target's name as written (callers of `parseArgs` that the chunker did not resolve). */
  name?: string;
}

interface ChunkRow {
  seq: number;
  id: string;
  path: string;
  kind: string;
  symbol: string;
  start_line: number;
  end_line: number;
  signature: string;
  doc: string;
  text: string;
  parent: string | null;
}

interface FileRow {
  hash: string;
  mtime: number | null;
  size: number | null;
}

function knownOf(row: FileRow): KnownFile {
  if (row.size === null) return { hash: row.hash };
  const mtime = row.mtime === null ? null : Number(row.mtime);
  return { hash: row.hash, stamp: { mtime, size: Number(row.size) } };
}

interface SkippedRow {
  reason: string;
  mtime: number | null;
  size: number;
}

/**
 * A row of `skipped` as a SkippedFile; undefined for a reason tern does not write (the file is
 * then read again).
 */
function skippedOf(row: SkippedRow): SkippedFile | undefined {
  if (row.reason !== "binary" && row.reason !== "generated") return undefined;
  const mtime = row.mtime === null ? null : Number(row.mtime);
  return { reason: row.reason, stamp: { mtime, size: Number(row.size) } };
}

function toChunk(row: ChunkRow): Chunk {
  const chunk: Chunk = {
    id: row.id,
    path: row.path,
    kind: row.kind as ChunkKind,
    symbol: row.symbol,
    startLine: Number(row.start_line),
    endLine: Number(row.end_line),
    signature: row.signature,
    doc: row.doc,
    text: row.text,
  };
  if (row.parent !== null) chunk.parent = row.parent;
  return chunk;
}

/** The text a chunk's embedding is computed from. */
export function embeddingText(chunk: Chunk): string {
  return `${chunk.symbol}\n${chunk.signature}\n${chunk.doc}\n${chunk.text.slice(0, 4000)}`;
}

/** The code index's SQLite store. Not safe for concurrent use within one process; see `open()`. */
export class IndexStore {
  #db: DatabaseSync;
  #embed: (text: string) => Float32Array;
  #vectors = new VectorCache();
  /** Inside beginBatch() … commitBatch(): writes share one transaction. */
  #batch = false;
  #statements = new Map<string, StatementSync>();
  readonly #maxChunks: number;
  /** The chunks stored, as last counted at `PRAGMA data_version` `version`, plus own writes. */
  #total: { count: number; version: number } | undefined;

  private constructor(
    db: DatabaseSync,
    embed: (text: string) => Float32Array,
    maxChunks: number,
  ) {
    this.#db = db;
    this.#embed = embed;
    this.#maxChunks = maxChunks;
  }

  /**
   * Opens (or creates) the index at `file`. A corrupt or foreign file is rebuilt and `notice`
   * says so in one line; `embed` computes chunk and query embeddings (default: embedText());
   * `maxChunks`: the most chunks it holds (default {@linkcode INDEX_MAX_CHUNKS}). Throws only
   * when no index can be created at `file`.
   */
  static open(
    file: string,
    options: { embed?: (text: string) => Float32Array; maxChunks?: number } = {},
  ): { store: IndexStore; notice?: string } {
    const { db, notice } = openDatabase(file);
    const store = new IndexStore(
      db,
      options.embed ?? embedText,
      options.maxChunks ?? INDEX_MAX_CHUNKS,
    );
    return notice === undefined ? { store } : { store, notice };
  }

  /** Each indexed file's path and content hash, to decide what to re-chunk. */
  fileHashes(): Map<string, string> {
    const rows = this.#sql("SELECT path, hash FROM files").all() as {
      path: string;
      hash: string;
    }[];
    return new Map(rows.map((row) => [row.path, row.hash]));
  }

  /** Each indexed file's hash and, when recorded, its stamp. */
  knownFiles(): Map<string, KnownFile> {
    const rows = this.#sql("SELECT path, hash, mtime, size FROM files")
      .all() as unknown as (FileRow & { path: string })[];
    return new Map(rows.map((row) => [row.path, knownOf(row)]));
  }

  /** What the store knows of the indexed file at `path`, or undefined. */
  knownFile(path: string): KnownFile | undefined {
    const row = this.#sql("SELECT hash, mtime, size FROM files WHERE path = ?").get(path);
    return row === undefined ? undefined : knownOf(row as unknown as FileRow);
  }

  /** The files read and skipped (skipFile()), by path. */
  skippedFiles(): Map<string, SkippedFile> {
    const rows = this.#sql("SELECT path, reason, mtime, size FROM skipped")
      .all() as unknown as (SkippedRow & { path: string })[];
    return new Map(rows.flatMap((row) => {
      const skipped = skippedOf(row);
      return skipped === undefined ? [] : [[row.path, skipped]];
    }));
  }

  /** What the store knows of the skipped file at `path`, or undefined. */
  skippedFile(path: string): SkippedFile | undefined {
    const row = this.#sql("SELECT reason, mtime, size FROM skipped WHERE path = ?").get(path);
    return row === undefined ? undefined : skippedOf(row as unknown as SkippedRow);
  }

  /**
   * Records that the file at `path` was read and skipped for `reason`, with its `stamp` (the
   * caller removes what was indexed of it, if anything). Indexing it forgets this.
   */
  skipFile(path: string, reason: SkipReason, stamp: FileStamp): void {
    this.#write(() =>
      this.#sql("INSERT OR REPLACE INTO skipped (path, reason, mtime, size) VALUES (?, ?, ?, ?)")
        .run(path, reason, stamp.mtime, stamp.size)
    );
  }

  /** Forgets that the file at `path` was skipped (it is gone, or no longer skipped for that). */
  unskipFile(path: string): void {
    this.#write(() => this.#sql("DELETE FROM skipped WHERE path = ?").run(path));
  }

  /** Records the stamp of a file whose content did not change. */
  stampFile(path: string, stamp: FileStamp): void {
    this.#write(() =>
      this.#sql("UPDATE files SET mtime = ?, size = ? WHERE path = ?")
        .run(stamp.mtime, stamp.size, path)
    );
  }

  /**
   * Starts one transaction for the writes up to commitBatch(): many files are written at the
   * cost of one commit, and readers in other processes keep seeing the last committed index
   * until then. A write that fails rolls the whole batch back (and ends it) before it throws.
   */
  beginBatch(): void {
    if (this.#batch) return;
    this.#vectors.clear();
    this.#db.exec("BEGIN IMMEDIATE");
    this.#batch = true;
  }

  /**
   * Writes many files with fewer checkpoints until endBulk(): one every 64 MB of the write-ahead
   * log instead of every 4 MB. Each commit stays as durable as any other.
   */
  beginBulk(): void {
    this.#db.exec("PRAGMA wal_autocheckpoint = 16384");
  }

  /** Ends beginBulk(): the usual checkpoints again, and the log checkpointed now. */
  endBulk(): void {
    this.#db.exec("PRAGMA wal_autocheckpoint = 1000");
    this.#db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  }

  /** Commits the writes since beginBatch(); when the commit fails, none of them is kept. */
  commitBatch(): void {
    if (!this.#batch) return;
    this.#batch = false;
    try {
      this.#db.exec("COMMIT");
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Drops the writes since beginBatch(). */
  rollbackBatch(): void {
    if (!this.#batch) return;
    this.#batch = false;
    this.#total = undefined;
    if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
  }

  /**
   * Replaces everything stored for `chunked.path` with `chunked` (and its stamp), in one
   * transaction; `given`: the chunks' vectors when they come from an endpoint. False when the
   * index is full (see writePrepared()).
   */
  replaceFile(chunked: ChunkedFile, stamp?: FileStamp, given?: Float32Array[]): boolean {
    const local = given === undefined && this.#embed === embedText;
    const prepared = prepareFile(chunked, local);
    const vectors = given ??
      (local ? undefined : chunked.chunks.map((chunk) => this.#embed(embeddingText(chunk))));
    return this.writePrepared(prepared, stamp, vectors);
  }

  /**
   * Replaces everything stored for the file `prepared` holds with it (and its stamp), in one
   * transaction. Its vectors are used unless `given` (one per chunk) are. Returns false, and
   * removes what was stored of the file, when its chunks would take the index past its
   * `maxChunks`: the index stops growing rather than fill the disk.
   */
  writePrepared(prepared: PreparedFile, stamp?: FileStamp, given?: Float32Array[]): boolean {
    const { chunked, words } = prepared;
    const count = chunked.chunks.length;
    const all = given === undefined ? prepared.vectors : undefined;
    const dimensions = all && count > 0 ? all.length / count : 0;
    const vectors = given?.length ?? (all && Number.isInteger(dimensions) ? count : 0);
    if (words.length !== count || (count > 0 && vectors !== count)) {
      throw new RangeError(
        `Cannot store "${chunked.path}": ${vectors} vectors and ${words.length} word sets ` +
          `for ${count} chunks`,
      );
    }
    const vectorOf = (index: number): Float32Array =>
      given ? given[index] : vectorAt(all!, index, dimensions);
    let stored = true;
    this.#write(() => {
      const total = this.#chunkTotal();
      const before = this.#chunksOf(chunked.path);
      this.#deleteFile(chunked.path);
      total.count -= before;
      if (count > 0 && total.count + count > this.#maxChunks) {
        stored = false;
        this.#relinkImporters(chunked.path);
        return;
      }
      total.count += count;
      this.#sql("DELETE FROM skipped WHERE path = ?").run(chunked.path);
      this.#sql(
        "INSERT INTO files (path, hash, language, base, mtime, size) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(
        chunked.path,
        chunked.hash,
        chunked.language,
        pathBase(chunked.path),
        stamp?.mtime ?? null,
        stamp?.size ?? null,
      );
      const chunkRow = this.#sql(
        `INSERT INTO chunks (id, path, kind, symbol, name, start_line, end_line, signature, doc,
          text, parent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const ftsRow = this.#sql(
        "INSERT INTO chunks_fts (rowid, symbol, signature, doc, text) VALUES (?, ?, ?, ?, ?)",
      );
      const vectorRow = this.#sql("INSERT INTO embeddings (seq, vector) VALUES (?, ?)");
      chunked.chunks.forEach((chunk, index) => {
        const { lastInsertRowid } = chunkRow.run(
          chunk.id,
          chunked.path,
          chunk.kind,
          chunk.symbol,
          symbolTail(chunk.symbol),
          chunk.startLine,
          chunk.endLine,
          chunk.signature,
          chunk.doc,
          chunk.text,
          chunk.parent ?? null,
        );
        const { symbol, signature, doc, text } = words[index];
        ftsRow.run(lastInsertRowid, symbol, signature, doc, text);
        vectorRow.run(lastInsertRowid, toBlob(vectorOf(index)));
      });
      const relationRow = this.#sql(
        `INSERT INTO relations (path, from_id, kind, to_id, name, tail, target_base,
         target_symbol) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const relation of chunked.relations) {
        relationRow.run(
          chunked.path,
          relation.from,
          relation.kind,
          relation.to ?? null,
          relation.name,
          nameTail(relation.name),
          relation.target?.base ?? null,
          relation.target?.symbol ?? null,
        );
      }
      if (chunked.relations.some((relation) => relation.target)) {
        this.#sql(RELINK_OWN).run(chunked.path);
      }
      this.#relinkImporters(chunked.path);
    });
    return stored;
  }

  /** How many chunks of `path` are stored. */
  #chunksOf(path: string): number {
    const row = this.#sql("SELECT count(*) AS n FROM chunks WHERE path = ?").get(path);
    return Number((row as { n: number }).n);
  }

  /** The count of stored chunks, counted again when another connection has written. */
  #chunkTotal(): { count: number; version: number } {
    const version = Number(
      (this.#sql("PRAGMA data_version").get() as { data_version: number }).data_version,
    );
    if (this.#total?.version !== version) {
      const { n } = this.#sql("SELECT count(*) AS n FROM chunks").get() as { n: number };
      this.#total = { count: Number(n), version };
    }
    return this.#total;
  }

  /** Re-resolves the calls of other files into `path` (a new, changed or removed file). */
  #relinkImporters(path: string): void {
    const base = pathBase(path);
    const relink = this.#sql(RELINK_IMPORTERS);
    relink.run(base);
    if (base.endsWith("/index")) relink.run(base.slice(0, -"/index".length));
  }

  /** Removes a file and its chunks, relations and embeddings; nothing happens when absent. */
  removeFile(path: string): void {
    this.#write(() => {
      if (this.#total !== undefined) this.#total.count -= this.#chunksOf(path);
      this.#deleteFile(path);
      this.#relinkImporters(path);
    });
  }

  /**
   * The chunks that best answer `query` (words or identifiers), best first: full-text matches
   * and, up to FULL_VECTOR_SCAN_LIMIT (_vectors.ts) chunks, embedding neighbours, ranked by rank().
   */
  search(query: string, options: SearchOptions = {}): Hit[] {
    const limit = options.limit ?? 10;
    const terms = queryWords(query);
    if (terms.length === 0 || limit <= 0) return [];
    const queryVector = options.queryVector ?? this.#embed(query);
    const pool = Math.max(limit * 5, 50);
    const weights = options.weights ?? DEFAULT_RANK_WEIGHTS;
    // One read transaction, so a writer committing in between cannot mix two versions of a file.
    this.#db.exec("BEGIN");
    try {
      const found = new Map<number, { bm25?: number }>();
      const match = this.#distinctive(terms).map((term) => `"${term}"`).join(" OR ");
      const textRows = this.#sql(
        `SELECT rowid AS seq, bm25(chunks_fts, ${COLUMN_WEIGHTS.join(", ")}) AS score
         FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?`,
      ).all(match, pool) as { seq: number; score: number }[];
      for (const row of textRows) found.set(Number(row.seq), { bm25: row.score });
      const matrix = this.#vectors.all(this.#db) ?? matrixOf(
        this.#selectIn("SELECT seq, vector FROM embeddings WHERE seq IN", [
          ...found.keys(),
        ]) as { seq: number; vector: Uint8Array }[],
      );
      const { cosines, best } = nearest(matrix, queryVector, pool);
      for (const row of best) {
        const seq = matrix.seqs[row];
        if (cosines[row] >= weights.vectorFloor && !found.has(seq)) found.set(seq, {});
      }
      const cosineOf = (seq: number) => {
        const row = matrix.rowOf.get(seq);
        return row === undefined ? 0 : cosines[row];
      };
      const rows = this.#selectIn("SELECT * FROM chunks WHERE seq IN", [
        ...found.keys(),
      ]) as unknown as ChunkRow[];
      const candidates: Candidate[] = rows.map((row) => ({
        chunk: toChunk(row),
        bm25: found.get(Number(row.seq))?.bm25,
        cosine: cosineOf(Number(row.seq)),
      }));
      return rank(query, candidates, { limit, weights });
    } finally {
      this.#db.exec("COMMIT");
    }
  }

  /** `terms` without those in more than COMMON_WORD_SHARE of the chunks, or the rarest one. */
  #distinctive(terms: string[]): string[] {
    if (terms.length < 2) return terms;
    const total = Number((this.#sql("SELECT count(*) AS n FROM chunks").get() as { n: number }).n);
    const docs = this.#sql("SELECT doc FROM chunks_vocab WHERE term = ?");
    const counted = terms.map((term) => ({
      term,
      count: Number((docs.get(term) as { doc: number } | undefined)?.doc ?? 0),
    }));
    const kept = counted.filter(({ count }) => count <= total * COMMON_WORD_SHARE);
    if (kept.length > 0) return kept.map(({ term }) => term);
    return [counted.reduce((a, b) => b.count < a.count ? b : a).term];
  }

  /** The relations matching `filter` (who calls X, what implements Y, what a chunk imports). */
  relations(filter: RelationFilter = {}): Relation[] {
    const where: string[] = [];
    const values: SQLInputValue[] = [];
    for (
      const [column, value] of [
        ["kind", filter.kind],
        ["from_id", filter.from],
        ["to_id", filter.to],
        ["name", filter.name],
      ] as const
    ) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      values.push(value);
    }
    const sql = `SELECT from_id, kind, to_id, name FROM relations${
      where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""
    } ORDER BY path, rowid`;
    const rows = this.#sql(sql).all(...values) as {
      from_id: string;
      kind: string;
      to_id: string | null;
      name: string;
    }[];
    return rows.map((row) => {
      const relation: Relation = {
        from: row.from_id,
        kind: row.kind as RelationKind,
        name: row.name,
      };
      if (row.to_id !== null) relation.to = row.to_id;
      return relation;
    });
  }

  /**
   * The relations of `kind` whose name as written matches one of `patterns` (SQLite GLOB:
   * case-sensitive, `*` and `?`; see globLiteral()), at most `limit`, in file order. With
   * `tail` (the nameTail() every name the patterns match has), only relations of that tail are
   * looked at, through its index: without it the patterns' leading `*` scans every relation.
   */
  relationsMatching(
    kind: RelationKind,
    patterns: string[],
    limit: number,
    tail?: string,
  ): Relation[] {
    if (patterns.length === 0 || limit <= 0) return [];
    const byTail = tail === undefined ? "" : " AND tail = ?";
    const rows = this.#db.prepare(
      `SELECT from_id, kind, to_id, name FROM relations WHERE kind = ?${byTail} AND (${
        patterns.map(() => "name GLOB ?").join(" OR ")
      }) ORDER BY path, rowid LIMIT ?`,
    ).all(kind, ...(tail === undefined ? [] : [tail]), ...patterns, limit) as {
      from_id: string;
      kind: string;
      to_id: string | null;
      name: string;
    }[];
    return rows.map((row) => ({
      from: row.from_id,
      kind: row.kind as RelationKind,
      name: row.name,
      ...(row.to_id === null ? {} : { to: row.to_id }),
    }));
  }

  /**
   * The chunks that define `name`: their symbol is `name` or ends in `.name` (defined where),
   * compared case-sensitively; at most `limit` (default all). Found through the index of the
   * symbols' last parts (symbolTail()), never by a scan of every symbol.
   */
  definitions(name: string, limit = -1): Chunk[] {
    const rows = this.#sql(
      `SELECT * FROM chunks WHERE name = ? AND (symbol = ? OR symbol GLOB ?)
       AND kind NOT IN ('FILE', 'WINDOW') ORDER BY path, start_line LIMIT ?`,
    ).all(symbolTail(name), name, `*.${globLiteral(name)}`, limit) as unknown as ChunkRow[];
    return rows.map(toChunk);
  }

  /** The chunk with this id, or undefined. */
  chunk(id: string): Chunk | undefined {
    const row = this.#sql("SELECT * FROM chunks WHERE id = ?").get(id);
    return row === undefined ? undefined : toChunk(row as unknown as ChunkRow);
  }

  /** Which embedding the stored vectors come from (set by resetEmbedding()), or undefined. */
  embeddingId(): string | undefined {
    const row = this.#sql("SELECT value FROM meta WHERE key = 'embedding'").get() as
      | { value: string }
      | undefined;
    return row?.value;
  }

  /**
   * Empties the index (files, chunks, words, vectors, relations; not the embedding cache) and
   * records `id` as its embedding: vectors of two embeddings must never be compared.
   */
  resetEmbedding(id: string): void {
    this.#write(() => {
      for (const table of ["files", "chunks", "embeddings", "relations"]) {
        this.#sql(`DELETE FROM ${table}`).run();
      }
      this.#sql("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')").run();
      this.#sql("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding', ?)").run(id);
    });
  }

  /** Vectors cached by key (see remote_embed.ts), for the keys that have one. */
  cachedVectors(keys: string[]): Map<string, Float32Array> {
    const rows = this.#selectKeys(keys);
    return new Map(rows.map((row) => [row.key, toVector(row.vector)]));
  }

  /** Caches vectors by key; a key already cached keeps its vector. */
  cacheVectors(entries: [string, Float32Array][]): void {
    if (entries.length === 0) return;
    this.#write(() => {
      const row = this.#sql(
        "INSERT OR IGNORE INTO embedding_cache (key, vector) VALUES (?, ?)",
      );
      for (const [key, vector] of entries) row.run(key, toBlob(vector));
    });
  }

  #selectKeys(keys: string[]): { key: string; vector: Uint8Array }[] {
    if (keys.length === 0) return [];
    return this.#sql(
      "SELECT key, vector FROM embedding_cache WHERE key IN (SELECT value FROM json_each(?))",
    ).all(JSON.stringify(keys)) as { key: string; vector: Uint8Array }[];
  }

  /** Closes the database (dropping an uncommitted batch); the store cannot be used afterwards. */
  close(): void {
    this.rollbackBatch();
    this.#db.close();
  }

  /** The prepared statement of `sql`, prepared once per connection. */
  #sql(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, statement = this.#db.prepare(sql));
    return statement;
  }

  #selectIn(prefix: string, seqs: number[]): Record<string, SQLInputValue>[] {
    if (seqs.length === 0) return [];
    // json_each keeps the statement one size whatever the number of ids.
    return this.#sql(`${prefix} (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(seqs)) as Record<string, SQLInputValue>[];
  }

  #deleteFile(path: string): void {
    if (this.#sql("SELECT 1 FROM files WHERE path = ?").get(path) === undefined) return;
    const seqs = this.#sql("SELECT seq FROM chunks WHERE path = ?").all(path) as {
      seq: number;
    }[];
    const deleteFts = this.#sql("DELETE FROM chunks_fts WHERE rowid = ?");
    for (const { seq } of seqs) deleteFts.run(seq);
    this.#sql("DELETE FROM embeddings WHERE seq IN (SELECT seq FROM chunks WHERE path = ?)")
      .run(path);
    this.#sql("DELETE FROM chunks WHERE path = ?").run(path);
    this.#sql("DELETE FROM relations WHERE path = ?").run(path);
    this.#sql("DELETE FROM files WHERE path = ?").run(path);
  }

  #write(body: () => void): void {
    this.#vectors.clear();
    if (this.#batch) {
      try {
        body();
      } catch (error) {
        // The whole batch goes: the index stays as last committed, never half a file.
        this.rollbackBatch();
        throw error;
      }
      return;
    }
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      body();
      this.#db.exec("COMMIT");
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      // The count may hold the rolled back write: counted again at the next write.
      this.#total = undefined;
      throw error;
    }
  }
}

/** `text` as a GLOB pattern that matches only itself (`*`, `?` and `[` bracketed). */
export function globLiteral(text: string): string {
  return text.replace(/[*?[]/g, (char) => `[${char}]`);
}
