/**
 * Replay once copied what each compaction kept: a file whose every compaction keeps everything
 * before it (a message, then a compaction keeping from the first message on, 40,000 times) took a
 * minute to show and grew with the square of its length. A compaction now costs the same however
 * much it keeps, and replay gives what it gave before (checked here against the plain way).
 */
import { deepEqual, ok } from "node:assert/strict";
import { branchSummaryMessage, replay } from "../../src/session/replay.ts";
import type { SessionEntry } from "../../src/session/types.ts";
import { summaryMessage } from "../../src/context/summary.ts";

const timestamp = "2026-12-01T00:00:00.000Z";

function message(id: string, parentId: string | null): SessionEntry {
  return { type: "message", id, parentId, timestamp, message: { role: "user", content: id } };
}

function compaction(id: string, parentId: string | null, firstKeptId: string | null) {
  return {
    type: "compaction",
    id,
    parentId,
    timestamp,
    summary: `summary ${id}`,
    firstKeptId,
    tokensBefore: 2,
    tokensAfter: 1,
  } as SessionEntry;
}

/** The conversation replay gives, the plain way (copying what each compaction keeps). */
function plainItems(path: SessionEntry[]): string[] {
  let items: { id: string; text: string }[] = [];
  for (const entry of path) {
    if (entry.type === "message") items.push({ id: entry.id, text: entry.message.content });
    if (entry.type === "branch" && entry.summary) {
      items.push({ id: entry.id, text: branchSummaryMessage(entry.summary).content });
    }
    if (entry.type === "compaction") {
      const kept = entry.firstKeptId === null
        ? -1
        : items.findIndex((item) => item.id === entry.firstKeptId);
      const summary = { id: entry.id, text: summaryMessage(entry.summary).content };
      items = [summary, ...(kept === -1 ? [] : items.slice(kept))];
    }
  }
  return items.map((item) => `${item.id}:${item.text}`);
}

function replayedItems(path: SessionEntry[]): string[] {
  return replay(path).items.map((item) => `${item.id}:${item.message.content}`);
}

Deno.test("replay() of 40,000 compactions that each keep everything is quick", () => {
  for (const keep of ["first message", "previous summary"]) {
    const path: SessionEntry[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 40_000; i++) {
      path.push(message(`m${i}`, parent));
      const kept = keep === "first message" ? "m0" : i === 0 ? "m0" : `c${i - 1}`;
      path.push(compaction(`c${i}`, `m${i}`, kept));
      parent = `c${i}`;
    }
    const started = performance.now();
    const items = replay(path).items;
    const took = performance.now() - started;
    ok(took < 15_000, `${keep}: replay took ${Math.round(took)} ms`);
    ok(items.length > 40_000, `${keep}: ${items.length} items`);
    deepEqual(items[0].id, "c39999");
  }
});

Deno.test("replay() keeps what each compaction kept, as copying it would", () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const path: SessionEntry[] = [];
    const ids: string[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 60; i++) {
      const id = `e${i}`;
      const pick = random(10);
      const entry = pick < 6
        ? message(id, parent)
        : pick < 9
        ? compaction(id, parent, random(4) === 0 ? null : ids[random(ids.length + 2)] ?? "gone")
        : {
          type: "branch",
          id,
          parentId: parent,
          timestamp,
          fromId: null,
          summary: "aside",
        } as SessionEntry;
      path.push(entry);
      ids.push(id);
      parent = id;
    }
    deepEqual(replayedItems(path), plainItems(path), `round ${round}`);
  }
});

function plan(id: string, data: Record<string, unknown>): SessionEntry {
  return { type: "plan", id, parentId: null, timestamp, data } as SessionEntry;
}

Deno.test("replay() of a plan's 30,000 node records is quick, and keeps each node's newest", () => {
  const path = [plan("p", { kind: "plan", planId: "P" })];
  for (let i = 0; i < 30_000; i++) {
    path.push(plan(`n${i}`, { kind: "node", planId: "P", nodeId: `x${i % 20_000}`, i }));
  }
  const started = performance.now();
  const records = replay(path).plan!;
  const took = performance.now() - started;
  ok(took < 15_000, `replay took ${Math.round(took)} ms`);
  deepEqual(records.length, 20_001);
  deepEqual(records.at(-1), { kind: "node", planId: "P", nodeId: "x9999", i: 29_999 });
  deepEqual(records[1], { kind: "node", planId: "P", nodeId: "x10000", i: 10_000 });
});

Deno.test("replay() keeps a plan's records as filtering them would", () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 200; round++) {
    const path: SessionEntry[] = [];
    let expected: unknown[] | undefined;
    for (let i = 0; i < 40; i++) {
      const pick = random(10);
      const data = pick === 0
        ? { kind: "plan", planId: `P${i}` }
        : pick < 8
        ? { kind: "node", planId: "P", nodeId: `x${random(5)}`, i }
        : { kind: "append", i };
      path.push(plan(`e${i}`, data));
      if (data.kind === "plan") expected = [data];
      else if (expected !== undefined) {
        if (data.kind === "node") {
          expected = expected.filter((d) => (d as { nodeId?: string }).nodeId !== data.nodeId);
        }
        expected.push(data);
      }
    }
    deepEqual(replay(path).plan, expected, `round ${round}`);
  }
});
