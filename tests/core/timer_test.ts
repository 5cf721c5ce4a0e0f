/** src/core/timer.ts: after() calls once after its delay, never once cancelled. */
import { deepEqual, equal } from "node:assert/strict";
import { after } from "../../src/core/timer.ts";

Deno.test("after() calls its function no sooner than its delay", async () => {
  const calls: number[] = [];
  const start = performance.now();
  const fired = new Promise<void>((resolve) =>
    after(30, () => {
      calls.push(performance.now() - start);
      resolve();
    })
  );
  await fired;
  equal(calls.length, 1);
  equal(calls[0] >= 29, true, `fired after ${calls[0]} ms`);
});

Deno.test("after() cancelled does not call; cancel() twice and after firing are harmless", async () => {
  const calls: string[] = [];
  const timer = after(10, () => calls.push("cancelled one"));
  timer.cancel();
  timer.cancel();
  const done = new Promise<void>((resolve) => after(40, () => resolve()));
  const fired = after(0, () => calls.push("kept"));
  await done;
  fired.cancel();
  deepEqual(calls, ["kept"]);
});

Deno.test("after() takes a negative or NaN delay as 0 and a huge one without throwing", async () => {
  const calls: string[] = [];
  await new Promise<void>((resolve) => after(-5, () => resolve()));
  await new Promise<void>((resolve) => after(Number.NaN, () => resolve()));
  after(Number.POSITIVE_INFINITY, () => calls.push("never in this test")).cancel();
  after(2 ** 40, () => calls.push("never in this test")).cancel();
  deepEqual(calls, []);
});
