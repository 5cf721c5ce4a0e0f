/**
 * request_permissions is judged, shown and granted as the real path a request names. A path on
 * whose way a link cannot be followed (a loop, a chain longer than the kernel follows, a folder
 * tern cannot look into) has no real path to show: it was judged as written (`ws/l0`, inside the
 * workspace, so the AUTO reviewer could grant it) while it led to `~/.ssh`. Such a path, and one
 * holding a control character, is refused before anyone is asked, naming what is wrong.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { expectError, withGate } from "./_gate_box.ts";

const allowAll = () => Promise.resolve({ decision: "allow" as const, reason: "ok" });

Deno.test("request_permissions refuses a path whose links cannot be followed, before review", async () => {
  await withGate({ mode: "auto", reviewer: allowAll, answers: [] }, async (box) => {
    // 45 links, past the 40 the kernel follows, the last one to the home folder's keys.
    for (let i = 0; i < 45; i++) {
      await Deno.symlink(join(box.ws, `l${i + 1}`), join(box.ws, `l${i}`));
    }
    await Deno.symlink(join(box.root, ".ssh"), join(box.ws, "l45"));
    await Deno.symlink(join(box.ws, "loop-b"), join(box.ws, "loop-a"));
    await Deno.symlink(join(box.ws, "loop-a"), join(box.ws, "loop-b"));
    const before = JSON.stringify(box.runtime.profile.grants);
    for (const [list, path] of [["read", "l0"], ["write", "l0/x"], ["read", "loop-a/key"]]) {
      const obs = await box.call("request_permissions", { reason: "x", [list]: [path] });
      expectError(obs, "INVALID_ARGUMENTS", /the link ".*" on its way cannot be followed/);
    }
    deepEqual(box.reviewed, []);
    deepEqual(box.asked, []);
    equal(JSON.stringify(box.runtime.profile.grants), before);
  });
});

Deno.test("request_permissions refuses a path or command with a control character, before review", async () => {
  await withGate({ mode: "ask", answers: ["once", "once", "once", "once"] }, async (box) => {
    for (
      const args of [
        { read: ["a\u0000b"] },
        { write: ["do\ncs"] },
        { read: ["x\u001b[2Kok"] },
        { commands: ["npm\rtest"] },
      ]
    ) {
      const obs = await box.call("request_permissions", { reason: "x", ...args });
      expectError(obs, "INVALID_ARGUMENTS", /control character/);
    }
    deepEqual(box.asked, []);
  });
});

Deno.test("request_permissions refuses port 0, which no connection uses", async () => {
  await withGate({ mode: "ask", answers: ["once"] }, async (box) => {
    const obs = await box.call("request_permissions", { reason: "x", hosts: ["example.com:0"] });
    expectError(obs, "INVALID_ARGUMENTS", /a port from 1 to 65535/);
    deepEqual(box.asked, []);
  });
});

Deno.test("request_permissions still resolves links it can follow, and grants a path not made yet", async () => {
  await withGate({ mode: "ask", answers: ["once", "once"] }, async (box) => {
    await Deno.symlink(box.outside, join(box.ws, "out"));
    const obs = await box.call("request_permissions", { reason: "x", read: ["out/secret.txt"] });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    deepEqual(box.asked, [`read ${join(box.outside, "secret.txt")} (for this turn)`]);
    const later = await box.call("request_permissions", { reason: "x", read: ["out/new/file"] });
    equal(later.status, "SUCCEEDED", JSON.stringify(later));
    equal(box.asked[1], `read ${join(box.outside, "new", "file")} (for this turn)`);
  });
});
