/**
 * A second process for code_index_concurrency_test.ts: an indexer caught mid-write. Takes the
 * index's lock file as tern's refresh does, opens a write transaction on the index at
 * Deno.args[0] and deletes every file's rows in it, prints "holding", and rolls back when its
 * stdin closes.
 */
import { DatabaseSync } from "node:sqlite";
import { tryLock } from "../../src/harness/code_index_live.ts";

const [file] = Deno.args;
const lock = tryLock(`${file}.lock`);
if (lock === undefined) throw new Error(`Cannot lock "${file}.lock": held`);
const db = new DatabaseSync(file);
db.exec("PRAGMA busy_timeout = 10000");
db.exec("BEGIN IMMEDIATE");
db.exec("DELETE FROM chunks");
db.exec("DELETE FROM files");
console.log("holding");
for await (const _ of Deno.stdin.readable) {
  // Until the test closes stdin.
}
db.exec("ROLLBACK");
db.close();
lock.close();
