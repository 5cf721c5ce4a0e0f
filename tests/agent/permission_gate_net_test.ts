/**
 * The audit log of a shell command with host grants (#18.5): the gate records each host the
 * command's filtering proxy connected it to, and each it refused (real bubblewrap, real proxy,
 * a server on 127.0.0.1).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { withGate } from "./_gate_box.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

testWith(
  [bwrapNeed],
  "PermissionGate audits the hosts a command with a host grant connected to and was refused",
  async () => {
    let hits = 0;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
      hits++;
      return new Response("granted host\n");
    });
    const port = server.addr.port;
    try {
      await withGate({ answers: ["once", "once"] }, async (box) => {
        const granted = await box.call("request_permissions", {
          reason: "fetch from the local server",
          hosts: [`127.0.0.1:${port}`],
        });
        equal(granted.status, "SUCCEEDED", JSON.stringify(granted));
        const obs = await box.call("bash", {
          command: `curl -sS --max-time 5 http://127.0.0.1:${port}/; ` +
            `curl -s -o /dev/null -w '%{http_code}\\n' --max-time 5 http://127.0.0.1:1/`,
        });
        equal(obs.status, "SUCCEEDED", JSON.stringify(obs));
        ok(obs.status === "SUCCEEDED" && obs.output.includes("granted host"), JSON.stringify(obs));
        ok(obs.status === "SUCCEEDED" && obs.output.includes("403"), JSON.stringify(obs));
        equal(hits, 1);
        const record = box.audit.find((r) => r.tool === "bash");
        deepEqual(record?.net, { connected: [`127.0.0.1:${port}`], refused: ["127.0.0.1:1"] });
      });
    } finally {
      await server.shutdown();
    }
  },
);
