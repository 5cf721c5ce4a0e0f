/**
 * request_permissions for a path the commands' view never shows as it is on the host (`/run`,
 * `/var/run`, `/proc`, `/dev`): the view replaces those folders with its own, so such a grant
 * would say "Granted" and show the commands nothing (and `/run` holds the sockets of host
 * daemons). It is refused before anyone is asked, with the reason.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { expectError, withGate } from "./_gate_box.ts";

async function withRunFile(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ dir: "/run", prefix: "tern-grant-" });
  await Deno.writeTextFile(join(dir, "agent.sock"), "host daemon\n");
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("request_permissions: a grant under /run, /proc or /dev is refused before asking, with the reason", async () => {
  await withRunFile(async (dir) => {
    await withGate({ mode: "ask", answers: ["once", "once", "once", "once"] }, async (box) => {
      const before = JSON.stringify(box.runtime.profile.grants);
      const paths = [join(dir, "agent.sock"), dir, "/run", "/proc/1/environ", "/dev/sda"];
      for (const path of paths) {
        for (const list of ["read", "write"]) {
          const obs = await box.call("request_permissions", { reason: "x", [list]: [path] });
          expectError(obs, "POLICY_DENIED", /commands never see .* as it is on the host/);
        }
      }
      const viaLink = await box.call("request_permissions", {
        reason: "x",
        read: [`/var/run/${dir.slice("/run/".length)}/agent.sock`],
      });
      expectError(viaLink, "POLICY_DENIED", /\/run/);
      deepEqual(box.asked, []);
      equal(JSON.stringify(box.runtime.profile.grants), before);
    });
  });
});

Deno.test("request_permissions: a grant beside the replaced folders is still asked for and shown", async () => {
  await withGate({ mode: "ask", answers: ["once"] }, async (box) => {
    const obs = await box.call("request_permissions", { reason: "x", read: [box.outside] });
    equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
    match(String(obs.output), /^Granted/);
    ok(box.asked.length === 1);
  });
});
