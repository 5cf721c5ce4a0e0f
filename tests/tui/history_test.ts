import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { History } from "../../src/tui/history.ts";

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

Deno.test("History.open() treats a missing file as empty", async () => {
  await withDir(async (dir) => {
    const history = await History.open(join(dir, "none.jsonl"));
    deepEqual(history.entries, []);
    equal(history.previous(""), undefined);
  });
});

Deno.test("History.open() skips malformed lines and non-string values", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "history.jsonl");
    await Deno.writeTextFile(path, '"first"\n{broken\n42\n"multi\\nline"\n\n"last"\n');
    const history = await History.open(path);
    deepEqual(history.entries, ["first", "multi\nline", "last"]);
  });
});

Deno.test("History.add() appends whole JSON lines to a file created with mode 0600", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "nested", "history.jsonl");
    const history = await History.open(path);
    await history.add("one");
    await history.add('two "quoted"\nand a newline');
    equal(await Deno.readTextFile(path), '"one"\n"two \\"quoted\\"\\nand a newline"\n');
    equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const reopened = await History.open(path);
    deepEqual(reopened.entries, ["one", 'two "quoted"\nand a newline']);
  });
});

Deno.test("History.add() skips blank text and a repeat of the newest entry", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "history.jsonl");
    const history = await History.open(path);
    await history.add("same");
    await history.add("same");
    await history.add("   ");
    await history.add("");
    await history.add("other");
    await history.add("same");
    deepEqual(history.entries, ["same", "other", "same"]);
    deepEqual(lines(await Deno.readTextFile(path)), ['"same"', '"other"', '"same"']);
  });
});

Deno.test("History.add() keeps the newest entries and compacts the file past twice the limit", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "history.jsonl");
    const history = await History.open(path, 3);
    for (let i = 1; i <= 6; i++) await history.add(`entry ${i}`);
    deepEqual(history.entries, ["entry 4", "entry 5", "entry 6"]);
    equal(lines(await Deno.readTextFile(path)).length, 6);
    await history.add("entry 7");
    deepEqual(lines(await Deno.readTextFile(path)), ['"entry 5"', '"entry 6"', '"entry 7"']);
    equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    deepEqual([...Deno.readDirSync(dir)].map((entry) => entry.name), ["history.jsonl"]);
    deepEqual((await History.open(path, 3)).entries, ["entry 5", "entry 6", "entry 7"]);
  });
});

Deno.test("History.open() keeps only the newest entries of a long file", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "history.jsonl");
    await Deno.writeTextFile(
      path,
      ["a", "b", "c", "d"].map((s) => JSON.stringify(s) + "\n").join(""),
    );
    deepEqual((await History.open(path, 2)).entries, ["c", "d"]);
  });
});

Deno.test("History.previous() and next() walk back and forth and return the draft", async () => {
  await withDir(async (dir) => {
    const history = await History.open(join(dir, "h.jsonl"));
    await history.add("a");
    await history.add("b");
    equal(history.next(), undefined);
    equal(history.previous("draft"), "b");
    equal(history.previous("b"), "a");
    equal(history.previous("a"), undefined);
    equal(history.next(), "b");
    equal(history.next(), "draft");
    equal(history.next(), undefined);
    equal(history.previous("new draft"), "b");
    history.reset();
    equal(history.previous("x"), "b");
    await history.add("c");
    equal(history.previous(""), "c");
  });
});
