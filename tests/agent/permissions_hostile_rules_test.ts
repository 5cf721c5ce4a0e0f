/**
 * Hostile repositories against the person's own request_permissions rules: a rule that names a
 * workspace path must not reach, through a link the repository ships, what lies outside it.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { expectError, readRoots, withGate } from "./_gate_box.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

Deno.test("request_permissions: an allow rule's workspace path grants nothing a link in the workspace leads out to", async () => {
  const rules: PermissionRule[] = [
    { action: "allow", tool: "request_permissions", read: ["docs"], write: ["<workspace>/out"] },
  ];
  await withGate({ mode: "bypass", rules }, async (box) => {
    // The repository ships `docs` and `out` as links to the person's keys and home folder.
    await Deno.symlink(join(box.root, ".ssh"), join(box.ws, "docs"));
    await Deno.symlink(box.root, join(box.ws, "out"));
    expectError(
      await box.call("request_permissions", { reason: "docs", read: ["docs"] }),
      "POLICY_DENIED",
      /bypass grants nothing/,
    );
    expectError(
      await box.call("request_permissions", { reason: "out", write: ["out/.bashrc"] }),
      "POLICY_DENIED",
      /bypass grants nothing/,
    );
    ok(!readRoots(box).some((path) => path.startsWith(join(box.root, ".ssh"))));
    const read = await box.call("read", { path: "docs/id_ed25519" });
    equal(read.status, "ERROR", JSON.stringify(read));
  });
});

Deno.test("request_permissions: a write grant in a protected folder is refused, not reported as granted", async () => {
  await withGate({ answers: ["once"] }, async (box) => {
    for (const path of [".git/hooks", "sub/.git/config", ".tern", join(box.root, ".tern", "x")]) {
      expectError(
        await box.call("request_permissions", { reason: "hooks", write: [path] }),
        "POLICY_DENIED",
        /no grant opens \.(git|tern) folders to writes/,
      );
    }
    equal(box.asked.length, 0, "the person is not asked for what no answer can give");
  });
});

Deno.test("request_permissions: a deny rule's host also refuses its other spellings and ports, and the person sees it as the proxy reads it", async () => {
  const rules: PermissionRule[] = [
    { action: "deny", tool: "request_permissions", hosts: ["169.254.169.254", "Evil.example"] },
  ];
  const disguised = ["0xa9.0xfe.0xa9.0xfe", "2852039166", "169.254.169.254:80", "EVIL.example:443"];
  await withGate({ answers: disguised.map(() => "once"), rules }, async (box) => {
    for (const host of disguised) {
      expectError(
        await box.call("request_permissions", { reason: "metadata", hosts: [host] }),
        "POLICY_DENIED",
        /A rule forbids this/,
      );
    }
    equal(box.asked.length, 0, JSON.stringify(box.asked));
    equal(box.runtime.profile.grants.net.length, 0);
    // A host no rule names is asked about as the proxy will read it.
    await box.call("request_permissions", { reason: "x", hosts: ["0x7f.1:8080", "Example.COM"] });
    ok(box.asked[0].startsWith("network 127.0.0.1:8080, example.com; "), box.asked[0]);
  });
});

Deno.test("PermissionGate: a deny rule naming a folder, with or without a trailing slash, keeps the file tools from what it holds", async () => {
  for (const path of ["secrets", "secrets/", "./secrets//"]) {
    await withGate({ mode: "bypass", rules: [{ action: "deny", path }] }, async (box) => {
      await Deno.mkdir(join(box.ws, "secrets", "deep"), { recursive: true });
      await Deno.writeTextFile(join(box.ws, "secrets", "deep", "key"), "TOPSECRET\n");
      for (
        const [tool, args] of [
          ["read", { path: "secrets/deep/key" }],
          ["read", { path: join(box.ws, "secrets", "deep", "key") }],
          ["write", { path: "secrets/new.txt", content: "x" }],
          ["list", { path: "secrets" }],
        ] as const
      ) {
        expectError(await box.call(tool, args), "POLICY_DENIED", /A rule forbids this/);
      }
      // A sibling whose name only starts the same is not the folder.
      await Deno.writeTextFile(join(box.ws, "secrets.md"), "notes\n");
      equal((await box.call("read", { path: "secrets.md" })).status, "SUCCEEDED");
    });
  }
});

testWith(
  [bwrapNeed],
  "PermissionGate: a session approval or allow rule for a command does not cover it run in another folder (env -C)",
  async () => {
    const rules: PermissionRule[] = [{ action: "allow", command: "mkdir" }];
    await withGate({ answers: ["session"], rules }, async (box) => {
      await Deno.mkdir(join(box.ws, "vendor"));
      equal((await box.call("bash", { command: "touch one.txt" })).status, "SUCCEEDED");
      for (const command of ["env -C vendor touch two.txt", "env --chdir=vendor mkdir d"]) {
        expectError(await box.call("bash", { command }), "POLICY_DENIED", /The user denied it/);
      }
      deepEqual(box.asked, [
        "touch one.txt",
        "env -C vendor touch two.txt",
        "env --chdir=vendor mkdir d",
      ]);
      await Deno.stat(join(box.ws, "vendor", "two.txt")).then(
        () => ok(false, "the approval for touch covered it in another folder"),
        (error) => ok(error instanceof Deno.errors.NotFound),
      );
      // As written, in its own folder, both still run unasked.
      equal((await box.call("bash", { command: "touch three.txt" })).status, "SUCCEEDED");
      equal((await box.call("bash", { command: "mkdir d" })).status, "SUCCEEDED");
      equal(box.asked.length, 3);
    });
  },
);

Deno.test("PermissionGate: a deny rule written as an absolute path refuses a grant of a folder holding it, and holds per call", async () => {
  // withGate's folder outside the workspace is /var/tmp/gate-outside-<random>.
  for (const path of ["/var/tmp/gate-outside-*/secret.txt", "/var/tmp/gate-outside-*"]) {
    await withGate({ answers: ["once"], rules: [{ action: "deny", path }] }, async (box) => {
      const granted = await box.call("request_permissions", { reason: "x", read: [box.outside] });
      expectError(granted, "POLICY_DENIED", /A rule forbids this/);
      deepEqual(box.asked, []);
      expectError(
        await box.call("read", { path: join(box.outside, "secret.txt") }),
        "POLICY_DENIED",
        /A rule forbids this/,
      );
    });
  }
  // A relative pattern stays about workspace-relative paths, whatever folders hold the workspace.
  await withGate(
    { mode: "bypass", rules: [{ action: "deny", path: "**/tmp/**" }] },
    async (box) => {
      await Deno.writeTextFile(join(box.ws, "a.txt"), "a\n");
      equal((await box.call("read", { path: "a.txt" })).status, "SUCCEEDED");
    },
  );
  // Allow rules stay about the workspace: an absolute one does not skip the question there.
  const rules: PermissionRule[] = [{ action: "allow", tool: "write", path: "/var/tmp/**" }];
  await withGate({ answers: ["once"], rules }, async (box) => {
    await box.call("request_permissions", { reason: "x", write: [box.outside] });
    expectError(
      await box.call("write", { path: join(box.outside, "new.txt"), content: "x" }),
      "POLICY_DENIED",
      /The user denied it/,
    );
  });
});
