/**
 * A person's deny rule about request_permissions' command prefixes refuses a grant that would
 * cover what it names. A grant of `git` alone lets `git -c x=y push` run without asking (its
 * approval key is `git`), so a rule refusing `git push` refuses `git` too; and a rule naming a
 * program (`git`) refuses a grant of any of its commands (`git push`), as a path rule refuses a
 * folder that holds what it names and a path inside it.
 */
import { deepEqual, equal } from "node:assert/strict";
import { expectError, withGate } from "./_gate_box.ts";

Deno.test("request_permissions: a deny rule on a command prefix refuses a shorter or longer prefix of it", async () => {
  const rules = [
    { action: "deny" as const, tool: "request_permissions", commands: ["git push"] },
    { action: "deny" as const, tool: "request_permissions", commands: ["curl"] },
  ];
  await withGate({ mode: "ask", answers: ["once", "once", "once"], rules }, async (box) => {
    for (const commands of [["git"], ["curl -d"], ["git  push"]]) {
      const obs = await box.call("request_permissions", { reason: "x", commands });
      expectError(obs, "POLICY_DENIED", /A rule forbids this/);
    }
    deepEqual(box.asked, []);
    // Another program, or another command of the same one, is still asked for.
    for (const commands of [["gitk"], ["git status"], ["curlie"]]) {
      const obs = await box.call("request_permissions", { reason: "x", commands });
      equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    }
    equal(box.asked.length, 3);
  });
});
