/**
 * request_permissions against the person's deny rules written as absolute paths: a granted
 * folder is open to commands and folder-wide searches, which name no path such a rule could
 * decide, so no grant (by the reviewer, a person or an allow rule) may overlap one.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Reviewer } from "../../src/sandbox/review.ts";
import { expectError, readRoots, withGate } from "./_gate_box.ts";

const allowAll: Reviewer = () => Promise.resolve({ decision: "allow", reason: "looks fine" });

async function withSecretFolder(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "deny-" }));
  await Deno.mkdir(join(dir, "priv"));
  await Deno.mkdir(join(dir, "pub"));
  await Deno.writeTextFile(join(dir, "priv", "key.txt"), "TOPSECRET\n");
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("request_permissions: a deny rule with an absolute path refuses a grant of it, inside it or holding it", async () => {
  await withSecretFolder(async (dir) => {
    await withGate({
      mode: "auto",
      reviewer: allowAll,
      rules: [
        { action: "deny", path: join(dir, "priv"), reason: "my keys" },
        { action: "deny", tool: "read", path: `${dir}/pub/**/*.pem` },
      ],
    }, async (box) => {
      const before = JSON.stringify(box.runtime.profile.grants);
      for (const path of [join(dir, "priv"), join(dir, "priv", "key.txt"), dir]) {
        const obs = await box.call("request_permissions", { reason: "x", read: [path] });
        expectError(obs, "POLICY_DENIED", /my keys/);
      }
      const obs = await box.call("request_permissions", { reason: "x", write: [join(dir, "pub")] });
      expectError(obs, "POLICY_DENIED", /A rule forbids this \(deny tool "read" path/);
      equal(JSON.stringify(box.runtime.profile.grants), before);
      deepEqual(box.reviewed, []);
      equal(box.audit.at(-1)?.decidedBy, "rule");
      const grep = await box.call("grep", { pattern: "TOPSECRET", path: dir });
      expectError(grep, "POLICY_DENIED", /outside the workspace/);
    });
  });
});

Deno.test("request_permissions: a person is never asked to open a folder that holds a path their deny rule names", async () => {
  await withSecretFolder(async (dir) => {
    await withGate({
      mode: "ask",
      answers: ["once", "once"],
      rules: [{ action: "deny", path: `${dir}/priv/`, reason: "my keys" }],
    }, async (box) => {
      const obs = await box.call("request_permissions", { reason: "x", write: [dir] });
      expectError(obs, "POLICY_DENIED", /my keys/);
      deepEqual(box.asked, []);
      await box.call("bash", { command: `echo pwned > ${dir}/priv/key.txt` });
      equal(await Deno.readTextFile(join(dir, "priv", "key.txt")), "TOPSECRET\n");
    });
  });
});

Deno.test("request_permissions: a deny rule with an absolute path leaves a grant beside what it matches alone", async () => {
  await withSecretFolder(async (dir) => {
    await withGate({
      mode: "auto",
      reviewer: allowAll,
      rules: [{ action: "deny", path: `${dir}/p?iv/*.txt` }],
    }, async (box) => {
      const held = await box.call("request_permissions", { reason: "x", read: [dir] });
      expectError(held, "POLICY_DENIED", /A rule forbids this/);
      const obs = await box.call("request_permissions", { reason: "x", read: [join(dir, "pub")] });
      equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
      ok(readRoots(box).includes(join(dir, "pub")));
    });
  });
});

Deno.test("PermissionGate: a deny rule with an absolute path holds for a repository's link leading there", async () => {
  await withSecretFolder(async (dir) => {
    await withGate({
      mode: "bypass",
      profile: ":danger-full-access",
      rules: [{ action: "deny", path: join(dir, "priv"), reason: "my keys" }],
    }, async (box) => {
      await Deno.symlink(join(dir, "priv"), join(box.ws, "docs"));
      expectError(await box.call("read", { path: "docs/key.txt" }), "POLICY_DENIED", /my keys/);
      const write = await box.call("write", { path: "docs/key.txt", content: "pwned" });
      expectError(write, "POLICY_DENIED", /my keys/);
      equal(await Deno.readTextFile(join(dir, "priv", "key.txt")), "TOPSECRET\n");
      equal(box.audit.at(-1)?.decidedBy, "rule");
    });
  });
});

Deno.test("request_permissions: a path not made yet is judged where the link on its way leads", async () => {
  await withGate({ mode: "auto", reviewer: allowAll }, async (box) => {
    await Deno.symlink(box.outside, join(box.ws, "docs"));
    await Deno.symlink(join(box.root, ".ssh", "new_key"), join(box.ws, "dangling"));
    const obs = await box.call("request_permissions", { reason: "x", write: ["docs/x"] });
    expectError(obs, "POLICY_DENIED", /writing outside the workspace \("\/var\/tmp\/gate-outside-/);
    const key = await box.call("request_permissions", { reason: "x", read: ["dangling"] });
    expectError(key, "POLICY_DENIED", /a secret location/);
    deepEqual(box.reviewed, []);
  });
});
