/** summarisedCount(): the count of a compaction entry of any version, whatever the file says. */
import { equal } from "node:assert/strict";
import { type CompactionEntry, summarisedCount } from "../../src/session/types.ts";

const base = {
  type: "compaction",
  id: "c1",
  parentId: null,
  timestamp: "2026-12-02T00:00:00.000Z",
  summary: "s",
  firstKeptId: null,
  tokensBefore: 10,
  tokensAfter: 1,
  fallback: false,
} as const;

Deno.test("summarisedCount() reads the count of new entries and the list of older ones", () => {
  equal(summarisedCount({ ...base, summarisedCount: 6000 }), 6000);
  equal(summarisedCount({ ...base, summarised: ["a", "b", "c"] }), 3);
  equal(summarisedCount({ ...base }), 0);
});

Deno.test("summarisedCount() takes neither a count nor a list of another type from a file", () => {
  const hostile = { ...base, summarisedCount: "9", summarised: { length: 5 } };
  equal(summarisedCount(hostile as unknown as CompactionEntry), 0);
});
