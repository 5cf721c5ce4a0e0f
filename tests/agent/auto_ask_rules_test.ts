/**
 * `autoAskRules`: in AUTO, a call one of the person's "ask" rules matches goes to a person when
 * it is "person" (a subagent of an ASK session always has it so), denied without one; the
 * reviewer is never asked. By default the reviewer answers it, as before.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { expectError, withGate } from "./_gate_box.ts";

const RULES: PermissionRule[] = [{ action: "ask", tool: "read", path: "secret.txt" }];
const allow = () => Promise.resolve({ decision: "allow" as const, reason: "fine" });

Deno.test('PermissionGate in AUTO with autoAskRules "person" asks the person, never the reviewer', async () => {
  await withGate(
    { mode: "auto", rules: RULES, autoAskRules: "person", reviewer: allow, answers: ["once"] },
    async (box) => {
      await Deno.writeTextFile(join(box.ws, "secret.txt"), "s3cret\n");
      const obs = await box.call("read", { path: "secret.txt" });
      equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
      deepEqual(box.asked, ["read secret.txt"]);
      deepEqual(box.reviewed, []);
      equal(box.audit[0].decidedBy, "person");
      // A read no rule asks about is allowed as before: nobody is asked.
      await Deno.writeTextFile(join(box.ws, "a.txt"), "a\n");
      equal((await box.call("read", { path: "a.txt" })).status, "SUCCEEDED");
      deepEqual(box.asked, ["read secret.txt"]);
    },
  );
});

Deno.test('PermissionGate in AUTO with autoAskRules "person" and nobody to ask denies, naming the rule', async () => {
  await withGate(
    { mode: "auto", rules: RULES, autoAskRules: "person", reviewer: allow },
    async (box) => {
      await Deno.writeTextFile(join(box.ws, "secret.txt"), "s3cret\n");
      const obs = await box.call("read", { path: "secret.txt" });
      expectError(
        obs,
        "POLICY_DENIED",
        /A rule \(ask tool "read" path "secret.txt"\) asks for a person \(autoAskRules is "person"/,
      );
      deepEqual(box.reviewed, []);
    },
  );
});

Deno.test("PermissionGate in AUTO leaves an ask rule to the reviewer by default", async () => {
  await withGate({ mode: "auto", rules: RULES, reviewer: allow, answers: [] }, async (box) => {
    await Deno.writeTextFile(join(box.ws, "secret.txt"), "s3cret\n");
    equal((await box.call("read", { path: "secret.txt" })).status, "SUCCEEDED");
    deepEqual(box.reviewed, ["read secret.txt"]);
    deepEqual(box.asked, []);
  });
});
