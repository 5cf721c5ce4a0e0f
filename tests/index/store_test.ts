import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { IndexStore } from "../../src/index/store.ts";
import { chunk, file, tempIndex } from "./_fixtures.ts";

function withStore(body: (store: IndexStore, file: string) => void): void {
  const { dir, file: path } = tempIndex();
  const { store, notice } = IndexStore.open(path);
  equal(notice, undefined);
  try {
    body(store, path);
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

const parserFile = file("src/parser.ts", [
  chunk("src/parser.ts", "FILE", "parser.ts", { endLine: 40, text: "export function parseArgs" }),
  chunk("src/parser.ts", "FUNCTION", "parseArgs", {
    startLine: 3,
    signature: "export function parseArgs(argv: string[]): Options",
    doc: "Reads the command line.",
    text: "export function parseArgs(argv: string[]): Options { return readFlags(argv); }",
  }),
], {
  hash: "h1",
  relations: [{ from: "src/parser.ts#FUNCTION:parseArgs:3", kind: "CALLS", name: "readFlags" }],
});

Deno.test("IndexStore.replaceFile() stores a file that fileHashes() then lists", () => {
  withStore((store) => {
    deepEqual(store.fileHashes(), new Map());
    store.replaceFile(parserFile);
    deepEqual(store.fileHashes(), new Map([["src/parser.ts", "h1"]]));
    equal(
      store.chunk("src/parser.ts#FUNCTION:parseArgs:3")?.signature,
      parserFile.chunks[1].signature,
    );
  });
});

Deno.test("IndexStore.replaceFile() drops the file's old chunks, words and relations", () => {
  withStore((store) => {
    store.replaceFile(parserFile);
    store.replaceFile(file("src/parser.ts", [
      chunk("src/parser.ts", "FUNCTION", "tokenize", { text: "function tokenize(input) {}" }),
    ], { hash: "h2" }));
    deepEqual(store.fileHashes(), new Map([["src/parser.ts", "h2"]]));
    equal(store.chunk("src/parser.ts#FUNCTION:parseArgs:3"), undefined);
    deepEqual(
      store.search("parseArgs").map((hit) => hit.chunk.symbol).includes("parseArgs"),
      false,
    );
    deepEqual(store.relations({ kind: "CALLS" }), []);
    deepEqual(store.search("tokenize").map((hit) => hit.chunk.symbol)[0], "tokenize");
  });
});

Deno.test("IndexStore.removeFile() removes one file and leaves the others", () => {
  withStore((store) => {
    store.replaceFile(parserFile);
    store.replaceFile(file("src/other.ts", [chunk("src/other.ts", "FUNCTION", "otherThing")], {
      hash: "h3",
    }));
    store.removeFile("src/parser.ts");
    store.removeFile("src/absent.ts");
    deepEqual(store.fileHashes(), new Map([["src/other.ts", "h3"]]));
    deepEqual(store.search("parse args").filter((hit) => hit.chunk.path === "src/parser.ts"), []);
    equal(store.search("other thing")[0].chunk.symbol, "otherThing");
  });
});

Deno.test("IndexStore.replaceFile() keeps the old rows when the new ones fail to insert", () => {
  withStore((store) => {
    store.replaceFile(parserFile);
    const twice = chunk("src/parser.ts", "FUNCTION", "dup");
    let failed = false;
    try {
      store.replaceFile(file("src/parser.ts", [twice, twice], { hash: "h9" }));
    } catch {
      failed = true;
    }
    ok(failed);
    deepEqual(store.fileHashes(), new Map([["src/parser.ts", "h1"]]));
    equal(store.search("parseArgs")[0].chunk.symbol, "parseArgs");
  });
});

Deno.test("IndexStore.relations() answers who calls, implements and where defined", () => {
  withStore((store) => {
    const run = "src/cli.ts#FUNCTION:run:1";
    const parse = "src/parser.ts#FUNCTION:parseArgs:3";
    store.replaceFile(parserFile);
    store.replaceFile(file("src/cli.ts", [
      chunk("src/cli.ts", "FUNCTION", "run"),
      chunk("src/cli.ts", "CLASS", "Shell", { startLine: 10 }),
      chunk("src/cli.ts", "METHOD", "Shell.parseArgs", { startLine: 11 }),
    ], {
      relations: [
        { from: run, kind: "CALLS", to: parse, name: "parseArgs" },
        { from: "src/cli.ts#CLASS:Shell:10", kind: "IMPLEMENTS", name: "Runner" },
      ],
    }));
    deepEqual(store.relations({ kind: "CALLS", to: parse }).map((r) => r.from), [run]);
    deepEqual(store.relations({ kind: "CALLS", name: "readFlags" }).map((r) => r.from), [parse]);
    deepEqual(store.relations({ kind: "IMPLEMENTS", name: "Runner" }), [
      { from: "src/cli.ts#CLASS:Shell:10", kind: "IMPLEMENTS", name: "Runner" },
    ]);
    deepEqual(store.definitions("parseArgs").map((c) => c.id), [
      "src/cli.ts#METHOD:Shell.parseArgs:11",
      parse,
    ]);
    deepEqual(store.definitions("parse_Args"), []);
  });
});

Deno.test("IndexStore.open() rebuilds a corrupt file and says so", () => {
  const { dir, file: path } = tempIndex();
  Deno.writeTextFileSync(path, "this is not a database at all ".repeat(200));
  const { store, notice } = IndexStore.open(path);
  try {
    match(notice ?? "", /^Rebuilt the code index ".*index\.db": /);
    deepEqual(store.fileHashes(), new Map());
    store.replaceFile(parserFile);
    equal(store.search("parseArgs")[0].chunk.symbol, "parseArgs");
  } finally {
    store.close();
  }
  const again = IndexStore.open(path);
  equal(again.notice, undefined);
  deepEqual(again.store.fileHashes(), new Map([["src/parser.ts", "h1"]]));
  again.store.close();
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("IndexStore.open() rebuilds another application's SQLite file and says so", () => {
  const { dir, file: path } = tempIndex();
  const foreign = new DatabaseSync(path);
  foreign.exec("CREATE TABLE files (name TEXT); INSERT INTO files VALUES ('x')");
  foreign.close();
  const { store, notice } = IndexStore.open(path);
  try {
    equal(notice, `Rebuilt the code index "${path}": not a tern code index`);
    store.replaceFile(parserFile);
    deepEqual(store.fileHashes(), new Map([["src/parser.ts", "h1"]]));
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("IndexStore.open() rebuilds an index of another schema version", () => {
  const { dir, file: path } = tempIndex();
  IndexStore.open(path).store.close();
  const old = new DatabaseSync(path);
  old.exec("PRAGMA user_version = 999");
  old.close();
  const { store, notice } = IndexStore.open(path);
  store.close();
  Deno.removeSync(dir, { recursive: true });
  match(notice ?? "", /schema version 999, expected \d+$/);
});

function generation(name: string) {
  const chunks = [1, 2, 3, 4, 5].map((line) =>
    chunk("src/gen.ts", "FUNCTION", `step${line}`, {
      startLine: line * 10,
      doc: name,
      text: `generation marker ${name}`,
    })
  );
  return file("src/gen.ts", chunks, { hash: name });
}

Deno.test("IndexStore: a second process reads while this one writes, never locked or mixed", async () => {
  const { dir, file: path } = tempIndex();
  const progress = `${dir}/progress`;
  const { store } = IndexStore.open(path);
  store.replaceFile(generation("g0"));
  const reader = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      new URL("./_reader.ts", import.meta.url).pathname,
      path,
      progress,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let written = 0;
  // Write until the reader has read 20 times, then 50 more times, so the two overlap.
  for (let after = -1; after < 50 && written < 100_000; written++) {
    store.replaceFile(generation(`g${written + 1}`));
    if (after >= 0) after++;
    else if (written % 10 === 0 && exists(progress)) after = 0;
  }
  store.replaceFile(generation("final"));
  const output = await reader.output();
  store.close();
  Deno.removeSync(dir, { recursive: true });
  const stderr = new TextDecoder().decode(output.stderr);
  equal(output.code, 0, stderr);
  const report = JSON.parse(new TextDecoder().decode(output.stdout));
  deepEqual(report.errors, []);
  deepEqual(report.mixed, []);
  ok(report.reads >= 20);
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("IndexStore.open() throws a precise error and deletes nothing when it cannot open", () => {
  const { dir } = tempIndex();
  const path = `${dir}/missing/index.db`;
  throws(
    () => IndexStore.open(path),
    (error: Error) => error.message.startsWith(`Cannot open the code index "${path}": `),
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("IndexStore.search() sees embeddings another connection wrote after its last search", () => {
  const { dir, file: path } = tempIndex();
  const reader = IndexStore.open(path).store;
  const writer = IndexStore.open(path).store;
  try {
    writer.replaceFile(file("src/a.ts", [chunk("src/a.ts", "FUNCTION", "renderTable")]));
    const symbols = () => reader.search("parser").map((hit) => hit.chunk.symbol);
    equal(symbols().includes("parsing"), false);
    // "parsing" shares no word with "parser", only character n-grams: found by embedding alone.
    writer.replaceFile(file("src/b.ts", [chunk("src/b.ts", "FUNCTION", "parsing")]));
    deepEqual(symbols(), ["parsing"]);
    writer.removeFile("src/b.ts");
    equal(symbols().includes("parsing"), false);
  } finally {
    reader.close();
    writer.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
