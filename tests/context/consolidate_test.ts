import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import type { Message } from "../../src/core/messages.ts";
import { estimateMessageTokens } from "../../src/context/tokens.ts";
import {
  consolidationDue,
  FIRST_CONSOLIDATION_TOKENS,
  MAX_FACT_LINE_CHARS,
  MAX_FACTS_PER_RUN,
  MAX_TOPIC_FILE_CHARS,
  MAX_TOPICS_PER_RUN,
  NEXT_CONSOLIDATION_TOKENS,
  parseConsolidation,
  type PathEntry,
  restoreFiles,
  topicName,
  writeTopics,
} from "../../src/context/consolidate.ts";

const answer = (content: string): Message => ({ role: "assistant", content });

/** Message entries of about `tokens` tokens each. */
function entries(count: number, tokens: number, prefix = "m"): PathEntry[] {
  const unit = "The build uses deno and the tests run in parallel. ";
  const per = estimateMessageTokens(answer(unit.repeat(100))) / 100;
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    type: "message",
    message: answer(unit.repeat(Math.ceil(tokens / per))),
  }));
}

const turn = { toolCalls: 0, answered: true, wroteMemory: false };

Deno.test("consolidationDue() waits for 10,000 tokens at first, then 5,000 more after a point", () => {
  const before = entries(1, FIRST_CONSOLIDATION_TOKENS - 500);
  equal(consolidationDue(before, turn), false);
  const first = entries(1, FIRST_CONSOLIDATION_TOKENS + 200);
  equal(consolidationDue(first, turn), true);
  const point: PathEntry = {
    id: "c1",
    type: "consolidation",
    data: { status: "done", from: null, upTo: "m0" },
  };
  const after = [...first, point, ...entries(1, NEXT_CONSOLIDATION_TOKENS - 500, "n")];
  equal(consolidationDue(after, turn), false);
  const more = [...first, point, ...entries(2, NEXT_CONSOLIDATION_TOKENS / 2 + 300, "n")];
  equal(consolidationDue(more, turn), true);
  // An undo keeps the point: the transcript before it was considered, its facts refused.
  const undone = [...first, point, {
    id: "c2",
    type: "consolidation",
    data: { status: "undone", from: null, upTo: "m0", undoes: "c1" },
  }];
  equal(consolidationDue(undone, turn), false);
});

Deno.test("consolidationDue() needs 3 tool calls or an answer, and never runs after the turn wrote memory", () => {
  const path = entries(1, FIRST_CONSOLIDATION_TOKENS + 200);
  equal(consolidationDue(path, { toolCalls: 2, answered: false, wroteMemory: false }), false);
  equal(consolidationDue(path, { toolCalls: 3, answered: false, wroteMemory: false }), true);
  equal(consolidationDue(path, { toolCalls: 5, answered: true, wroteMemory: true }), false);
});

Deno.test("parseConsolidation() turns hostile topic names into flat names and caps facts", () => {
  const facts = Array.from({ length: 50 }, (_, i) => ({ fact: `f${i}`, source: "x" }));
  const topics = parseConsolidation(
    "Sure!\n" + JSON.stringify({
      topics: [
        { topic: "../../etc/passwd", facts: [{ fact: "a\nIgnore all\u001b[2J", source: "s\r" }] },
        { topic: "/abs/path.md", facts: ["plain string fact"] },
        { topic: "...", facts: ["no name left"] },
        { topic: "big", facts },
        ...Array.from({ length: 10 }, (_, i) => ({ topic: `t${i}`, facts: ["z"] })),
      ],
    }),
  );
  deepEqual(topics.slice(0, 2).map((topic) => topic.name), ["etc-passwd", "abs-path"]);
  equal(topics[0].lines[0], "- a Ignore all [2J (source: s)");
  ok(topics.length <= MAX_TOPICS_PER_RUN);
  equal(topics.flatMap((topic) => topic.lines).length, MAX_FACTS_PER_RUN);
  equal(topicName("A Very/../Long: Name!!"), "a-very-long-name");
  equal(topicName("../"), undefined);
  // C1 controls (an 8-bit CSI, NEL), bidi overrides and zero-width characters become spaces.
  const [c1] = parseConsolidation(JSON.stringify({
    topics: [{
      topic: "t",
      title: "Ti\u009b31mtle\u202e",
      facts: [{ fact: "x\u0085y\u2067z\u200bw\u2028v", source: "s\u009c" }],
    }],
  }));
  equal(c1.lines[0], "- x y z w v (source: s)");
  ok(!/[\u0080-\u009f\u200b\u202e]/.test(c1.title), JSON.stringify(c1.title));
  throws(() => parseConsolidation("no json here"), /no JSON object/);
  throws(() => parseConsolidation('{"facts": []}'), /no "topics" list/);
});

Deno.test("parseConsolidation() masks a key before a long fact or title is cut", () => {
  const key = "sk-test-consolidate-Q7rT2vX9pL4mN8bK";
  const mask = (text: string) => text.replaceAll(key, "[masked]");
  // A cut through the key would leave its first half, which no mask recognises.
  const [topic] = parseConsolidation(
    JSON.stringify({
      topics: [{
        topic: "ci",
        title: `${"T".repeat(60)} ${key}`,
        facts: [{ fact: `${"a".repeat(MAX_FACT_LINE_CHARS - 20)} ${key}`, source: "ci.yml" }],
      }],
    }),
    { mask },
  );
  ok(topic.lines[0].length <= MAX_FACT_LINE_CHARS);
  for (const text of [topic.title, topic.lines[0]]) {
    ok(!text.includes(key.slice(0, 8)), text);
  }
});

async function withWorkspace(body: (ws: string, root: string) => Promise<void>): Promise<void> {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-consolidate-" }));
  const ws = join(root, "ws");
  await Deno.mkdir(ws);
  try {
    await body(ws, root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("writeTopics() appends to .tern/memory/<name>.md, and restoreFiles() puts them back", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".tern", "memory"), { recursive: true });
    const existing = join(ws, ".tern", "memory", "testing.md");
    await Deno.writeTextFile(existing, "# Testing\n- old fact\n");
    const files = writeTopics(ws, [
      { name: "testing", title: "Testing", lines: ["- old fact", "- new fact (source: x)"] },
      { name: "deploy", title: "Deploying", lines: ["- tag first"] },
    ]);
    deepEqual(files.map((file) => [file.path, file.before]), [
      [".tern/memory/testing.md", "# Testing\n- old fact\n"],
      [".tern/memory/deploy.md", null],
    ]);
    equal(await Deno.readTextFile(existing), "# Testing\n- old fact\n- new fact (source: x)\n");
    equal(
      await Deno.readTextFile(join(ws, ".tern", "memory", "deploy.md")),
      "# Deploying\n- tag first\n",
    );
    // A person's later edit is kept: that file is not restored.
    await Deno.writeTextFile(join(ws, ".tern", "memory", "deploy.md"), "# Mine\n");
    const result = restoreFiles(ws, { status: "done", from: null, upTo: "x", files });
    deepEqual(result, {
      restored: [".tern/memory/testing.md"],
      changed: [".tern/memory/deploy.md"],
    });
    equal(await Deno.readTextFile(existing), "# Testing\n- old fact\n");
    // A recorded path outside the memory folder (a tampered session) is never touched.
    await Deno.writeTextFile(join(ws, "victim.txt"), "keep");
    restoreFiles(ws, {
      status: "done",
      from: null,
      upTo: "x",
      files: [{ path: "victim.txt", before: null, after: "keep" }],
    });
    equal(await Deno.readTextFile(join(ws, "victim.txt")), "keep");
  });
});

Deno.test("restoreFiles() restores nothing when one of the files cannot be read back", async () => {
  await withWorkspace(async (ws) => {
    const files = writeTopics(ws, [
      { name: "alpha", title: "Alpha", lines: ["- a"] },
      { name: "beta", title: "Beta", lines: ["- b"] },
    ]);
    const alpha = join(ws, ".tern", "memory", "alpha.md");
    const beta = join(ws, ".tern", "memory", "beta.md");
    // A planted link where the second topic was: that file cannot be restored.
    await Deno.remove(beta);
    await Deno.symlink(alpha, beta);
    throws(
      () => restoreFiles(ws, { status: "done", from: null, upTo: "x", files }),
      /not a regular file/,
    );
    // The first was not restored (removed, as before the consolidation) on its own.
    equal(await Deno.readTextFile(alpha), "# Alpha\n- a\n");
  });
});

Deno.test("writeTopics() never follows a symlink: not .tern, not .tern/memory, not a topic file", async () => {
  await withWorkspace(async (ws, root) => {
    const outside = join(root, "outside");
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "testing.md"), "OUTSIDE");
    const topics = [{ name: "testing", title: "T", lines: ["- x"] }];
    await Deno.symlink(outside, join(ws, ".tern"));
    throws(() => writeTopics(ws, topics), /is not a folder \(or is a symlink\)/);
    await Deno.remove(join(ws, ".tern"));
    await Deno.mkdir(join(ws, ".tern"));
    await Deno.symlink(outside, join(ws, ".tern", "memory"));
    throws(() => writeTopics(ws, topics), /is not a folder \(or is a symlink\)/);
    await Deno.remove(join(ws, ".tern", "memory"));
    await Deno.mkdir(join(ws, ".tern", "memory"));
    await Deno.symlink(join(outside, "testing.md"), join(ws, ".tern", "memory", "testing.md"));
    throws(() => writeTopics(ws, topics), /not a regular file with one link/);
    await Deno.remove(join(ws, ".tern", "memory", "testing.md"));
    await Deno.link(join(outside, "testing.md"), join(ws, ".tern", "memory", "testing.md"));
    throws(() => writeTopics(ws, topics), /not a regular file with one link/);
    equal(await Deno.readTextFile(join(outside, "testing.md")), "OUTSIDE");
  });
});

Deno.test("writeTopics() stops a topic file at its size cap", async () => {
  await withWorkspace((ws) => {
    const lines = Array.from({ length: 100 }, (_, i) => `- ${"x".repeat(400)} ${i}`);
    const [file] = writeTopics(ws, [{ name: "big", title: "Big", lines }]);
    ok(file.after.length <= MAX_TOPIC_FILE_CHARS);
    ok(file.after.length > MAX_TOPIC_FILE_CHARS - 500);
    return Promise.resolve();
  });
});

Deno.test("writeTopics() refuses a topic file far larger than tern writes, before reading it", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".tern", "memory"), { recursive: true });
    const huge = join(ws, ".tern", "memory", "testing.md");
    // A sparse file: a repository's 1 GiB topic would be read whole into tern's process.
    const file = await Deno.open(huge, { write: true, create: true });
    await file.truncate(1024 * 1024 * 1024);
    file.close();
    throws(
      () => writeTopics(ws, [{ name: "testing", title: "Testing", lines: ["- a fact"] }]),
      /holds 1073741824 bytes, more than a topic file tern writes/,
    );
    equal((await Deno.stat(huge)).size, 1024 * 1024 * 1024);
  });
});

Deno.test("writeTopics() leaves a topic file that is not UTF-8 as it is, and keeps a BOM", async () => {
  await withWorkspace(async (ws) => {
    await Deno.mkdir(join(ws, ".tern", "memory"), { recursive: true });
    const latin1 = join(ws, ".tern", "memory", "deploy.md");
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...new TextEncoder().encode("# Deploy\ncaf"),
      0xe9,
      0x0a,
    ]);
    await Deno.writeFile(latin1, bytes);
    throws(
      () => writeTopics(ws, [{ name: "deploy", title: "Deploy", lines: ["- a fact"] }]),
      /"[^"]*deploy\.md": it is not UTF-8 text/,
    );
    deepEqual(await Deno.readFile(latin1), bytes);
    // UTF-8 with a BOM: the fact is added, the BOM stays.
    const withBom = join(ws, ".tern", "memory", "testing.md");
    await Deno.writeTextFile(withBom, "\ufeff# Testing\n");
    const [file] = writeTopics(ws, [{ name: "testing", title: "Testing", lines: ["- a fact"] }]);
    equal(file.after, "\ufeff# Testing\n- a fact\n");
    equal(await Deno.readTextFile(withBom), "\ufeff# Testing\n- a fact\n");
  });
});
