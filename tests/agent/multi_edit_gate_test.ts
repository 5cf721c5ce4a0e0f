/**
 * multi_edit gets review, confinement and audit from what it declares, with no change to the
 * gate: against the real sandbox (worker, Deno's permission audit), like edit.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { readDenoAudit } from "../../src/sandbox/audit.ts";
import { expectError, withGate } from "./_gate_box.ts";

const EDITS = [
  { old_string: "one", new_string: "1" },
  { old_string: "three", new_string: "3" },
];

Deno.test("PermissionGate asks for multi_edit as for edit and audits the path it writes", async () => {
  await withGate({ answers: ["once", "once"] }, async (box) => {
    await Deno.writeTextFile(join(box.ws, "a.txt"), "one\ntwo\nthree\n");
    let obs = await box.call("edit", { path: "a.txt", old_string: "two", new_string: "2" });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    obs = await box.call("multi_edit", { path: "a.txt", edits: EDITS });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    equal(await Deno.readTextFile(join(box.ws, "a.txt")), "1\n2\n3\n");
    deepEqual(box.asked, ["edit a.txt", "multi_edit a.txt"]);
    for (const record of box.audit) {
      equal(record.decidedBy, "person");
      deepEqual(record.paths, [{ path: "a.txt", write: true }]);
    }
  });
});

Deno.test("PermissionGate denies multi_edit as edit without a person, and a deny rule's path", async () => {
  await withGate({
    rules: [{ action: "deny", path: "secret/**", reason: "Secrets stay as they are" }],
  }, async (box) => {
    await Deno.writeTextFile(join(box.ws, "a.txt"), "one\nthree\n");
    await Deno.mkdir(join(box.ws, "secret"));
    await Deno.writeTextFile(join(box.ws, "secret", "b.txt"), "one\nthree\n");
    for (const tool of ["edit", "multi_edit"]) {
      const args = tool === "edit"
        ? { path: "a.txt", old_string: "one", new_string: "1" }
        : { path: "a.txt", edits: EDITS };
      expectError(await box.call(tool, args), "POLICY_DENIED", new RegExp(`"tool": "${tool}"`));
    }
    const denied = await box.call("multi_edit", { path: "secret/b.txt", edits: EDITS });
    expectError(denied, "POLICY_DENIED", /Secrets stay as they are/);
    equal(box.audit.at(-1)?.decidedBy, "rule");
    equal(await Deno.readTextFile(join(box.ws, "a.txt")), "one\nthree\n");
    equal(await Deno.readTextFile(join(box.ws, "secret", "b.txt")), "one\nthree\n");
  });
});

Deno.test("PermissionGate runs multi_edit in the confined worker: Deno checked its write there", async () => {
  await withGate({ mode: "bypass", denoAudit: true }, async (box) => {
    await Deno.writeTextFile(join(box.ws, "a.txt"), "one\nthree\n");
    const obs = await box.call("multi_edit", { path: "a.txt", edits: EDITS });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    const [record] = box.audit;
    equal(record.sandbox, "worker");
    ok(record.denoAudit, "the worker wrote no permission audit");
    // The worker process (not tern's) asked Deno for write access to the file it replaced.
    const checks = await readDenoAudit(record.denoAudit);
    ok(
      checks.some((c) => c.permission === "write" && c.value?.startsWith(join(box.ws, "a.txt"))),
      JSON.stringify(checks.filter((c) => c.permission === "write")),
    );
  });
});
