/**
 * Commands have a loopback of their own, so "network localhost" reads as the sandbox's own
 * server; a grant of it reaches the host's loopback through the proxy: every service of this
 * machine (databases, container engines, tern's own model server). What the person is asked,
 * and the model told, says so for each spelling of this machine; another host reads as before.
 * A deny rule naming this machine in one spelling (`localhost`) refuses the others (`127.0.0.1`,
 * `[::1]`, `0`), which reach the same services.
 */
import { equal, ok } from "node:assert/strict";
import type { PermissionRule } from "../../src/config/schema.ts";
import { expectError, withGate } from "./_gate_box.ts";

Deno.test("request_permissions: a grant of this machine's loopback says it reaches its own services", async () => {
  const local = [
    "localhost:5432",
    "app.localhost",
    "127.0.0.2",
    "[::1]:80",
    "0",
    "[::ffff:127.0.0.1]",
  ];
  await withGate({ mode: "ask", answers: [...local, "x"].map(() => "deny") }, async (box) => {
    for (const host of local) {
      await box.call("request_permissions", { reason: "x", hosts: [host] });
      ok(
        /this machine's own services, outside the sandbox/.test(box.asked.at(-1)!),
        box.asked.at(-1),
      );
    }
    await box.call("request_permissions", { reason: "x", hosts: ["example.com"] });
    equal(box.asked.at(-1), "network example.com (for this turn)");
  });
});

Deno.test("request_permissions: a deny rule naming this machine in one spelling refuses the others", async () => {
  const rules: PermissionRule[] = [
    { action: "deny", tool: "request_permissions", hosts: ["localhost"] },
  ];
  await withGate({ mode: "ask", answers: ["deny", "deny"], rules }, async (box) => {
    for (const host of ["127.0.0.1:8080", "[::1]", "0", "app.localhost:3000", "2130706433"]) {
      const obs = await box.call("request_permissions", { reason: "x", hosts: [host] });
      expectError(obs, "POLICY_DENIED", /A rule forbids this/);
    }
    equal(box.asked.length, 0, JSON.stringify(box.asked));
    // Another host is still asked about.
    await box.call("request_permissions", { reason: "x", hosts: ["example.com"] });
    equal(box.asked.length, 1);
  });
});
