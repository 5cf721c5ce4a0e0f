import { equal } from "node:assert/strict";
import { sleep } from "../../src/core/sleep.ts";

Deno.test("sleep() resolves true when the time has passed, false when the signal aborts first", async () => {
  equal(await sleep(5), true);
  equal(await sleep(5, new AbortController().signal), true);
  // Aborted midway: false, long before the minute is up.
  const midway = new AbortController();
  queueMicrotask(() => midway.abort());
  equal(await sleep(60_000, midway.signal), false);
  // Aborted already: false, even for no wait at all.
  equal(await sleep(0, AbortSignal.abort()), false);
  equal(await sleep(60_000, AbortSignal.abort()), false);
  // No wait: true at once.
  equal(await sleep(0), true);
  equal(await sleep(-1), true);
  equal(await sleep(Number.NaN), true);
});

Deno.test("sleep() leaves no listener on the signal once it ends", async () => {
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
    listeners++;
    add(...args);
  };
  controller.signal.removeEventListener = (...args: Parameters<typeof remove>) => {
    listeners--;
    remove(...args);
  };
  for (let i = 0; i < 3; i++) equal(await sleep(1, controller.signal), true);
  equal(listeners, 0);
});
