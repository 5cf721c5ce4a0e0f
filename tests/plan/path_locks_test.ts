import { deepEqual, equal, rejects } from "node:assert/strict";
import { join } from "node:path";
import { PathLocks } from "../../src/plan/path_locks.ts";

/** Lets every queued callback and timer run once (a yield, not a timed wait). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Takes the lock for `path` and holds it until `release()`; `entered` once `fn` runs. */
function hold(locks: PathLocks, path: string, log: string[], name: string) {
  const gate = Promise.withResolvers<void>();
  const entered = Promise.withResolvers<void>();
  const done = locks.withLock(path, async () => {
    log.push(`${name} in`);
    entered.resolve();
    await gate.promise;
    log.push(`${name} out`);
    return name;
  });
  return { done, entered: entered.promise, release: () => gate.resolve() };
}

Deno.test("PathLocks.withLock() runs calls for one path one after another, first come first served", async () => {
  const locks = new PathLocks();
  const log: string[] = [];
  const first = hold(locks, "/work/a.ts", log, "first");
  const second = hold(locks, "/work/a.ts", log, "second");
  const third = hold(locks, "/work/a.ts", log, "third");
  await first.entered;
  await settle();
  deepEqual(log, ["first in"]);
  first.release();
  await second.entered;
  await settle();
  deepEqual(log, ["first in", "first out", "second in"]);
  third.release();
  second.release();
  deepEqual(await Promise.all([first.done, second.done, third.done]), ["first", "second", "third"]);
  deepEqual(log, ["first in", "first out", "second in", "second out", "third in", "third out"]);
  equal(locks.size, 0);
});

Deno.test("PathLocks.withLock() lets different paths run at the same time", async () => {
  const locks = new PathLocks();
  const log: string[] = [];
  const a = hold(locks, "/work/a.ts", log, "a");
  const b = hold(locks, "/work/b.ts", log, "b");
  await Promise.all([a.entered, b.entered]);
  deepEqual(log, ["a in", "b in"]);
  equal(locks.size, 2);
  b.release();
  a.release();
  await Promise.all([a.done, b.done]);
  equal(locks.size, 0);
});

Deno.test("PathLocks.withLock() treats spellings of one absolute path as one lock", async () => {
  const locks = new PathLocks();
  const log: string[] = [];
  const relative = hold(locks, "src/./x.ts", log, "relative");
  const absolute = hold(locks, join(Deno.cwd(), "lib/../src/x.ts"), log, "absolute");
  await relative.entered;
  await settle();
  deepEqual(log, ["relative in"]);
  equal(locks.size, 1);
  relative.release();
  absolute.release();
  await Promise.all([relative.done, absolute.done]);
  deepEqual(log, ["relative in", "relative out", "absolute in", "absolute out"]);
});

Deno.test("PathLocks.withLock() releases the lock when fn throws", async () => {
  const locks = new PathLocks();
  const log: string[] = [];
  const gate = Promise.withResolvers<void>();
  const failing = locks.withLock("/work/a.ts", async () => {
    await gate.promise;
    throw new Error('Cannot write file "a.ts": disk full');
  });
  const next = hold(locks, "/work/a.ts", log, "next");
  gate.resolve();
  await rejects(failing, /disk full/);
  await next.entered;
  next.release();
  equal(await next.done, "next");
  equal(locks.size, 0);
  await rejects(locks.withLock("/work/b.ts", () => Promise.reject(new Error("boom"))), /boom/);
  await rejects(
    locks.withLock("/work/c.ts", () => {
      throw new Error("thrown at once");
    }),
    /thrown at once/,
  );
  equal(locks.size, 0);
});
