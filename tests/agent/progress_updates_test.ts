import { deepEqual, equal, match } from "node:assert/strict";
import { PROGRESS_MAX_CHARS, progressUpdates } from "../../src/agent/progress_updates.ts";

Deno.test("progressUpdates() sends the first piece at once and holds the rest of a burst", () => {
  const sent: string[] = [];
  const progress = progressUpdates((text) => sent.push(text), 60_000);
  progress.update("first\n");
  deepEqual(sent, ["first\n"]);
  progress.update("second\n");
  progress.update("third\n");
  deepEqual(sent, ["first\n"]);
  progress.flush();
  deepEqual(sent, ["first\n", "second\nthird\n"]);
  // Nothing waits: a flush sends nothing more.
  progress.flush();
  equal(sent.length, 2);
});

Deno.test("progressUpdates() keeps only the end of a large burst, saying how much it left out", () => {
  const sent: string[] = [];
  const progress = progressUpdates((text) => sent.push(text), 60_000);
  progress.update("start\n");
  const chunk = "a".repeat(65_536);
  for (let i = 0; i < 100; i++) progress.update(chunk);
  progress.update("the end\n");
  progress.flush();
  equal(sent.length, 2);
  const skipped = 100 * 65_536 + "the end\n".length - PROGRESS_MAX_CHARS;
  match(sent[1], new RegExp(`^\\[… ${skipped} characters of output not shown as it came …\\]\\n`));
  equal(sent[1].endsWith("a".repeat(1_000) + "the end\n"), true);
  equal(sent[1].length - sent[1].indexOf("\n") - 1, PROGRESS_MAX_CHARS);
});

Deno.test("progressUpdates() sends a held piece when the interval has passed", async () => {
  const sent: string[] = [];
  const progress = progressUpdates((text) => sent.push(text), 20);
  progress.update("one");
  progress.update("two");
  const { promise, resolve } = Promise.withResolvers<void>();
  setTimeout(resolve, 200);
  await promise;
  deepEqual(sent, ["one", "two"]);
  progress.flush();
  equal(sent.length, 2);
});
