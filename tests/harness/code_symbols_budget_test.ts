/**
 * code_symbols' questions stay short on a large index: definitions and relations are found
 * through indexes of their last parts (a `callees` question once ran 200 scans of every symbol
 * on tern's main thread), and every question stops at its deadline with what it found.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { answerSymbols } from "../../src/harness/code_symbols_query.ts";
import { IndexStore } from "../../src/index/store.ts";
import type { Relation } from "../../src/index/types.ts";
import { chunk, file, tempIndex } from "../index/_fixtures.ts";

/** A store of `files` files of `per` functions each, and `hub` calling 200 unresolved names. */
function bigStore(path: string, files: number, per: number): IndexStore {
  const { store } = IndexStore.open(path);
  store.beginBatch();
  for (let f = 0; f < files; f++) {
    const chunks = Array.from(
      { length: per },
      (_, i) =>
        chunk(`src/f${f}.ts`, "METHOD", `Class${f}.method${f}_${i}`, { startLine: i * 3 + 1 }),
    );
    store.replaceFile(file(`src/f${f}.ts`, chunks));
  }
  const hub = chunk("src/hub.ts", "FUNCTION", "hub");
  const relations: Relation[] = [{ from: hub.id, kind: "CALLS", name: "obj.method3_7" }];
  for (let i = 0; i < 199; i++) {
    relations.push({ from: hub.id, kind: "CALLS", name: `this.missing${i}` });
  }
  store.replaceFile(file("src/hub.ts", [hub], { relations }));
  store.commitBatch();
  return store;
}

Deno.test("answerSymbols() finds definitions and callers through indexes, not by scanning", () => {
  const { dir, file: path } = tempIndex();
  try {
    const store = bigStore(path, 1, 3);
    store.close();
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const plan = (sql: string) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
          .map((row) => row.detail).join("; ");
      const definitions = plan(
        "SELECT * FROM chunks WHERE name = 'x' AND (symbol = 'x' OR symbol GLOB '*.x') " +
          "AND kind NOT IN ('FILE', 'WINDOW') ORDER BY path, start_line LIMIT 5",
      );
      ok(/USING INDEX chunks_name/.test(definitions), definitions);
      const callers = plan(
        "SELECT from_id FROM relations WHERE kind = 'CALLS' AND tail = 'x' AND " +
          "(name GLOB 'x' OR name GLOB '*.x') ORDER BY path, rowid LIMIT 5",
      );
      ok(/USING INDEX relations_tail/.test(callers), callers);
    } finally {
      db.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("answerSymbols() answers callees of a function with 200 unresolved calls on a large index in well under a second", () => {
  const { dir, file: path } = tempIndex();
  const store = bigStore(path, 100, 500);
  try {
    const started = performance.now();
    const { answers, partial } = answerSymbols(store, "hub", "callees", 20);
    const took = performance.now() - started;
    equal(partial, false);
    deepEqual(answers.map((answer) => answer.chunk.symbol), ["Class3.method3_7"]);
    ok(took < 500, `callees took ${took.toFixed(0)} ms`);
    // Callers by a qualified call's last part, and definitions by a method's.
    deepEqual(
      answerSymbols(store, "method3_7", "callers", 5).answers.map((a) => a.chunk.symbol),
      ["hub"],
    );
    deepEqual(
      answerSymbols(store, "method3_7", "definitions", 5).answers.map((a) => a.chunk.symbol),
      ["Class3.method3_7"],
    );
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("answerSymbols() past its deadline answers what it found and says it is partial", () => {
  const { dir, file: path } = tempIndex();
  const store = bigStore(path, 2, 5);
  try {
    const { answers, partial } = answerSymbols(store, "hub", "callees", 20, performance.now());
    equal(partial, true);
    deepEqual(answers, []);
    const callers = answerSymbols(store, "method3_7", "callers", 5, performance.now() - 1);
    equal(callers.partial, true);
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("IndexStore.open() rebuilds an index of the schema before the indexed last parts", () => {
  const { dir, file: path } = tempIndex();
  try {
    IndexStore.open(path).store.close();
    const db = new DatabaseSync(path);
    db.exec("PRAGMA user_version = 4");
    db.close();
    const { store, notice } = IndexStore.open(path);
    try {
      ok(notice !== undefined && /schema version 4, expected 5/.test(notice), notice);
      store.replaceFile(file("a.ts", [chunk("a.ts", "FUNCTION", "alpha")]));
      equal(store.definitions("alpha").length, 1);
    } finally {
      store.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
