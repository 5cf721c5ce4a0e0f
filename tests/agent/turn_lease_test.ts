/** The turn lease: a grant for one turn is asked for once that turn runs alone. */
import { equal, rejects } from "node:assert/strict";
import { TurnLease } from "../../src/agent/turn_lease.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

Deno.test("TurnLease claims once the asking turn runs alone, refuses a second claim, holds off new turns", async () => {
  const lease = new TurnLease();
  await lease.enter();
  await lease.enter();
  let claimed: boolean | undefined;
  const claim = lease.claim().then((value) => claimed = value);
  await tick();
  equal(claimed, undefined, "claimed while another turn runs");
  // The other turn asks meanwhile: refused, not made to wait (they would wait for each other).
  equal(await lease.claim(), false);
  lease.leave();
  await claim;
  equal(claimed, true);
  // Held: the holder may ask again; a new turn waits until it is released.
  equal(await lease.claim(), true);
  let entered = false;
  const next = lease.enter().then(() => entered = true);
  await tick();
  equal(entered, false, "a turn started while another held its grant");
  lease.release();
  await next;
  equal(entered, true);
});

Deno.test("TurnLease gives up a claim whose wait is aborted, and the last turn out ends a held one", async () => {
  const lease = new TurnLease();
  await lease.enter();
  await lease.enter();
  const stop = new AbortController();
  const claim = lease.claim(stop.signal);
  stop.abort(new Error("cancelled"));
  await rejects(claim, /cancelled/);
  // Given up: a turn may start, and another claim may wait.
  await lease.enter();
  lease.leave();
  lease.leave();
  equal(await lease.claim(), true);
  lease.leave();
  // The holder ended without a release (its sandbox was replaced): new turns still start.
  let entered = false;
  await lease.enter().then(() => entered = true);
  equal(entered, true);
});
