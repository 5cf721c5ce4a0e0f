/**
 * request_permissions whose request holds a key: the masker hides it from whoever decides, so
 * they would judge a grant they cannot read. As for any call, the reviewer never decides it, and
 * a person is told part of it is hidden.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import type { Reviewer } from "../../src/sandbox/review.ts";
import { expectError, SECRET, withGate } from "./_gate_box.ts";

const allowAll: Reviewer = () => Promise.resolve({ decision: "allow", reason: "looks fine" });

Deno.test("request_permissions in auto mode: a request with a hidden key never reaches the reviewer", async () => {
  await withGate({ mode: "auto", reviewer: allowAll }, async (box) => {
    const before = JSON.stringify(box.runtime.profile.grants);
    for (
      const request of [
        { read: [join(box.outside, SECRET)] },
        { commands: [`curl ${SECRET}`] },
      ]
    ) {
      const obs = await box.call("request_permissions", { reason: "x", ...request });
      expectError(obs, "POLICY_DENIED", /hidden from review/);
    }
    deepEqual(box.reviewed, []);
    equal(JSON.stringify(box.runtime.profile.grants), before);
  });
});

Deno.test("request_permissions: the person is told part of a request is hidden as a key", async () => {
  await withGate({ mode: "auto", reviewer: allowAll, answers: ["deny"] }, async (box) => {
    const obs = await box.call("request_permissions", {
      reason: "x",
      read: [join(box.outside, SECRET)],
    });
    expectError(obs, "POLICY_DENIED", /The user denied it/);
    deepEqual(box.reviewed, []);
    equal(box.requests[0]?.hiddenKeys, true);
  });
});
