import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { join } from "node:path";
import { TernError } from "../../src/core/errors.ts";
import { type Fact, MemoryStore, projectFactsPath, userFactsPath } from "../../src/memory/facts.ts";
import { encodeCwd } from "../../src/session/paths.ts";

const WORKSPACE = "/home/someone/my project";

/** A temporary tern home, removed after `body`. */
async function withHome(body: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "tern-memory-" });
  try {
    await body(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

async function rejectsUsage(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await rejects(promise, (error: unknown) => {
    ok(error instanceof TernError, String(error));
    equal(exitCodeForError(error), 2);
    match(error.message, pattern);
    return true;
  });
}

Deno.test("projectFactsPath() names the file like the workspace's session folder", () => {
  for (const workspace of [WORKSPACE, "/a/b", "/a-b", `/${"x".repeat(120)}`, "/tmp/日本"]) {
    equal(
      projectFactsPath("/h", workspace),
      join("/h", "memory", "projects", `${encodeCwd(workspace)}.jsonl`),
    );
  }
  equal(userFactsPath("/h"), "/h/memory/user.jsonl");
});

Deno.test("MemoryStore.add() writes one line per fact with private modes and lists user facts first", async () => {
  await withHome(async (home) => {
    const store = await MemoryStore.open(home, WORKSPACE);
    deepEqual(store.list(), []);
    const first = await store.add("Run tests with\n  `deno task test`.\n", "project");
    const second = await store.add("I prefer tabs", "user");
    const third = await store.add("The API lives in src/api", "project");
    match(first.id, /^[0-9a-f]{8}$/);
    equal(first.text, "Run tests with `deno task test`.");
    equal(first.scope, "project");
    ok(!Number.isNaN(Date.parse(first.created)));
    deepEqual(store.list().map((fact) => fact.id), [second.id, first.id, third.id]);
    deepEqual(await store.add("I  prefer\ttabs", "user"), second);
    equal((await store.add("I prefer tabs", "project")).scope, "project");

    const projectPath = projectFactsPath(home, WORKSPACE);
    const lines = (await Deno.readTextFile(projectPath)).split("\n");
    // A project fact records its workspace: a colliding file name shares no fact.
    deepEqual(lines.slice(0, 2).map((line) => JSON.parse(line)), [
      { ...first, workspace: WORKSPACE },
      { ...third, workspace: WORKSPACE },
    ]);
    equal(lines.length, 4);
    equal((await Deno.stat(projectPath)).mode! & 0o777, 0o600);
    equal((await Deno.stat(userFactsPath(home))).mode! & 0o777, 0o600);
    equal((await Deno.stat(join(home, "memory"))).mode! & 0o777, 0o700);
    equal((await Deno.stat(join(home, "memory", "projects"))).mode! & 0o777, 0o700);

    const reopened = await MemoryStore.open(home, WORKSPACE);
    deepEqual(reopened.list(), store.list());
    const elsewhere = await MemoryStore.open(home, "/somewhere/else");
    deepEqual(elsewhere.list(), [second]);
  });
});

Deno.test("MemoryStore.add() refuses empty and over-long facts with exit code 2", async () => {
  await withHome(async (home) => {
    const store = await MemoryStore.open(home, WORKSPACE);
    await rejectsUsage(store.add(" \n\t ", "user"), /^Cannot remember an empty fact/);
    await rejectsUsage(
      store.add("x".repeat(2_001), "user"),
      /^Cannot remember a fact of 2,001 characters: the limit is 2,000$/,
    );
    equal((await store.add("é".repeat(2_000), "user")).text.length, 2_000);
    equal((await store.add("a\u001b[31mb\r\nc", "user")).text, "a [31mb c");
  });
});

Deno.test("MemoryStore.forget() takes a unique id prefix and its tombstone survives reopening", async () => {
  await withHome(async (home) => {
    const store = await MemoryStore.open(home, WORKSPACE);
    const facts: Fact[] = [];
    for (let i = 0; i < 40; i++) {
      facts.push(await store.add(`fact ${i}`, i % 2 ? "user" : "project"));
    }
    // 40 random ids over 16 first digits: some first digit is shared.
    const shared = facts.find((fact) => facts.some((o) => o !== fact && o.id[0] === fact.id[0]))!;
    await rejectsUsage(
      store.forget(shared.id[0]),
      new RegExp(
        `^Fact id "${shared.id[0]}" is ambiguous: it matches \\d+ facts: .*"${shared.id}"`,
      ),
    );
    await rejectsUsage(store.forget("zz"), /^No remembered fact has an id starting "zz"$/);
    await rejectsUsage(store.forget("  "), /^Cannot forget a fact: give its id/);

    let length = 1;
    while (facts.some((o) => o !== shared && o.id.startsWith(shared.id.slice(0, length)))) length++;
    const gone = await store.forget(shared.id.slice(0, length).toUpperCase());
    deepEqual(gone, shared);
    ok(!store.list().some((fact) => fact.id === shared.id));
    await rejectsUsage(store.forget(shared.id), /^No remembered fact has an id starting/);
    const text = await Deno.readTextFile(
      shared.scope === "user" ? userFactsPath(home) : projectFactsPath(home, WORKSPACE),
    );
    const tombstone = JSON.parse(text.trimEnd().split("\n").at(-1)!);
    equal(tombstone.type, "forget");
    equal(tombstone.id, shared.id);

    const reopened = await MemoryStore.open(home, WORKSPACE);
    equal(reopened.list().length, 39);
    ok(!reopened.list().some((fact) => fact.id === shared.id));
  });
});

Deno.test("MemoryStore.forget() sees facts another store saved since it opened", async () => {
  await withHome(async (home) => {
    const early = await MemoryStore.open(home, WORKSPACE);
    const late = await MemoryStore.open(home, WORKSPACE);
    const fact = await late.add("saved by another process", "project");
    deepEqual(await early.forget(fact.id), fact);
    await late.reload();
    deepEqual(late.list(), []);
  });
});

Deno.test("MemoryStore.open() skips a torn last line and malformed lines, and the next add steps over it", async () => {
  await withHome(async (home) => {
    const store = await MemoryStore.open(home, WORKSPACE);
    const kept = await store.add("kept", "user");
    const path = userFactsPath(home);
    const junk = [
      "not json",
      "[1,2]",
      JSON.stringify({ id: "12345678", text: "wrong scope", scope: "project", created: "x" }),
      JSON.stringify({ id: "xyz", text: "bad id", scope: "user", created: "x" }),
      JSON.stringify({ type: "future", id: "abcdef12", text: "unknown type", scope: "user" }),
    ];
    await Deno.writeTextFile(path, `${junk.join("\n")}\n{"id":"0badc0de","text":"torn`, {
      append: true,
    });
    const reopened = await MemoryStore.open(home, WORKSPACE);
    deepEqual(reopened.list(), [kept]);
    const next = await reopened.add("after the tear", "user");
    const again = await MemoryStore.open(home, WORKSPACE);
    deepEqual(again.list(), [kept, next]);
    ok((await Deno.readTextFile(path)).endsWith(`"torn\n${JSON.stringify(next)}\n`));
  });
});
