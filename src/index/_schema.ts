/**
 * Opening the index's SQLite file: pragmas, the schema and its version, and rebuilding a file
 * that is corrupt or belongs to something else. Private to src/index/.
 */
import { DatabaseSync } from "node:sqlite";
import { rmSync } from "node:fs";

/** Marks a file as tern's code index (`PRAGMA application_id`, "tIdx"). */
export const APPLICATION_ID = 0x74496478;

/**
 * The schema version in `PRAGMA user_version`; a file with another version is rebuilt. 5: the
 * indexed last parts of symbols (`chunks.name`) and of relation names (`relations.tail`).
 */
export const SCHEMA_VERSION = 5;

/** How long a statement waits for another process's lock before failing, in milliseconds. */
export const BUSY_TIMEOUT_MS = 10_000;

const SCHEMA = `
CREATE TABLE files (
  path TEXT PRIMARY KEY, hash TEXT NOT NULL, language TEXT NOT NULL, base TEXT NOT NULL,
  mtime REAL, size INTEGER
);
CREATE INDEX files_base ON files(base);
CREATE TABLE chunks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  kind TEXT NOT NULL,
  symbol TEXT NOT NULL,
  name TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  signature TEXT NOT NULL,
  doc TEXT NOT NULL,
  text TEXT NOT NULL,
  parent TEXT
);
CREATE INDEX chunks_path ON chunks(path);
CREATE INDEX chunks_symbol ON chunks(symbol);
CREATE INDEX chunks_name ON chunks(name);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  symbol, signature, doc, text, content='', contentless_delete=1, tokenize='unicode61'
);
CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE TABLE relations (
  path TEXT NOT NULL,
  from_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  to_id TEXT,
  name TEXT NOT NULL,
  tail TEXT NOT NULL,
  target_base TEXT,
  target_symbol TEXT
);
CREATE INDEX relations_target ON relations(target_base);
CREATE INDEX relations_path ON relations(path);
CREATE INDEX relations_to ON relations(kind, to_id);
CREATE INDEX relations_name ON relations(kind, name);
CREATE INDEX relations_tail ON relations(kind, tail);
CREATE INDEX relations_from ON relations(from_id);
CREATE TABLE embeddings (seq INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE embedding_cache (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE skipped (
  path TEXT PRIMARY KEY, reason TEXT NOT NULL, mtime REAL, size INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** An open index database and, when the file had to be rebuilt, why (one line). */
export interface OpenedDatabase {
  db: DatabaseSync;
  notice?: string;
}

function pragma(db: DatabaseSync, name: string): number {
  const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, number> | undefined;
  return Number(row?.[name] ?? 0);
}

/** Opens `file` with WAL and a busy timeout and makes sure it holds this schema version. */
function openChecked(file: string): DatabaseSync {
  // node:sqlite opens in defensive mode (no edits of sqlite_master) by default.
  const db = new DatabaseSync(file);
  try {
    // The file may come from anywhere: views and triggers in it may not call functions.
    db.exec("PRAGMA trusted_schema = OFF");
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    if (ours(db)) return db;
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have created the schema while this one waited for the lock.
      if (!ours(db)) {
        const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as {
          n: number;
        };
        if (Number(tables.n) > 0) throw new ForeignFile(describe(db));
        db.exec(SCHEMA);
        db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
        db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      }
      db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function ours(db: DatabaseSync): boolean {
  return pragma(db, "application_id") === APPLICATION_ID &&
    pragma(db, "user_version") === SCHEMA_VERSION;
}

function describe(db: DatabaseSync): string {
  const id = pragma(db, "application_id");
  return id === APPLICATION_ID
    ? `schema version ${pragma(db, "user_version")}, expected ${SCHEMA_VERSION}`
    : "not a tern code index";
}

class ForeignFile extends Error {
  override name = "ForeignFile";
}

function removeDatabase(file: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(file + suffix, { force: true });
}

/** SQLite's messages for a file that is not a database or is damaged (node:sqlite has no code). */
const CORRUPT = /file is not a database|database disk image is malformed/;

/**
 * Opens the index at `file`, creating it when absent. A corrupt file, a file of another
 * application or of another schema version is deleted and created anew, and `notice` says so;
 * the index is a cache of the workspace, so nothing but indexing time is lost. Any other failure
 * (a folder that is not writable, a lock held past BUSY_TIMEOUT_MS) throws
 * `Cannot open the code index "<file>": <detail>` and leaves the file alone.
 */
export function openDatabase(file: string): OpenedDatabase {
  let detail: string;
  try {
    return { db: openChecked(file) };
  } catch (error) {
    detail = firstLine(error);
    if (!(error instanceof ForeignFile) && !CORRUPT.test(detail)) {
      throw new Error(`Cannot open the code index "${file}": ${detail}`, { cause: error });
    }
  }
  removeDatabase(file);
  try {
    return { db: openChecked(file), notice: `Rebuilt the code index "${file}": ${detail}` };
  } catch (error) {
    throw new Error(`Cannot open the code index "${file}": ${firstLine(error)}`, { cause: error });
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}
