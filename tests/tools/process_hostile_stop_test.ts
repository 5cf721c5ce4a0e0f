/**
 * A hostile model against the process tools: a background process that hides its children from
 * `process_stop` (setsid, nohup, a double fork), a flood of output with no line break, and
 * `process_stop` pointed at what the model did not start (tern itself, pid 1, a negative pid, an
 * id named like an object's member).
 */
import { match, ok } from "node:assert/strict";
import { withGate } from "../agent/_gate_box.ts";
import { assertNoProcessWith, marker } from "../sandbox/_bwrap_helpers.ts";
import { bwrapNeed } from "../support/needs.ts";

type Box = Parameters<Parameters<typeof withGate>[1]>[0];

// Without a sandbox only the process group is reached: one that leaves it (`setsid`) escapes, as
// SECURITY.md says, so that case starts none.
const ESCAPES = (mark: string, setsid: boolean) =>
  (setsid ? `setsid sh -c 'sleep ${mark}1' >/dev/null 2>&1 & ` : "") +
  `nohup sleep ${mark}2 >/dev/null 2>&1 & disown; ` +
  `(sh -c 'sleep ${mark}3' >/dev/null 2>&1 &) ; ` +
  `echo up; exec sleep ${mark}4`;

async function stopsEverything(box: Box, mark: string, setsid: boolean): Promise<void> {
  const started = await box.call("bash", {
    command: ESCAPES(mark, setsid),
    run_in_background: true,
    ready_text: "up",
    timeout_ms: 60_000,
  });
  ok(started.status === "SUCCEEDED", JSON.stringify(started));
  const stopped = await box.call("process_stop", { id: "p1" });
  ok(stopped.status === "SUCCEEDED", JSON.stringify(stopped));
  match(stopped.output, /^Stopped: p1 stopped/);
  // Stopped by the call, before the sandbox closes.
  for (const n of setsid ? [1, 2, 3, 4] : [2, 3, 4]) await assertNoProcessWith(`sleep ${mark}${n}`);
}

Deno.test({
  name: "process_stop ends a sandboxed process's setsid, nohup and double-forked children",
  ignore: !bwrapNeed.ok,
  fn: async () => {
    const mark = marker();
    await withGate({ mode: "bypass" }, (box) => stopsEverything(box, mark, true));
  },
});

Deno.test("process_stop ends an unsandboxed process's nohup and double-forked children", async () => {
  const mark = marker();
  try {
    await withGate(
      { mode: "bypass", profile: ":danger-full-access" },
      (box) => stopsEverything(box, mark, false),
    );
  } finally {
    // Whatever escaped, the test leaves nothing behind.
    await new Deno.Command("pkill", { args: ["-f", `sleep ${mark}`] }).output();
  }
});

Deno.test("process_stop and process_logs refuse ids that name no process the model started", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    const ids = [
      String(Deno.pid),
      "1",
      "-1",
      "0",
      "p0",
      "p-1",
      " p1",
      "P1",
      "__proto__",
      "constructor",
      "p99999999999999999999",
      "\x1b]0;owned\x07",
    ];
    for (const id of ids) {
      for (const tool of ["process_stop", "process_logs"]) {
        const result = await box.call(tool, { id });
        if (result.status !== "ERROR") {
          throw new Error(`${tool} ${JSON.stringify(id)}: ${JSON.stringify(result)}`);
        }
        match(result.message, /Cannot find background process/);
        // deno-lint-ignore no-control-regex
        ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(result.message), JSON.stringify(result.message));
      }
    }
  });
});

Deno.test("process_logs of a flood without line breaks keeps memory and the result bounded", async () => {
  await withGate({ mode: "bypass", profile: ":danger-full-access" }, async (box) => {
    const started = await box.call("bash", {
      command:
        "head -c 50000000 /dev/zero | tr '\\0' x; printf '\\n\\x1b]0;owned\\x07\\x9b31m\\xff\\xfe end\\n'; echo done",
      run_in_background: true,
      ready_text: "done",
      timeout_ms: 120_000,
    });
    ok(started.status === "SUCCEEDED", JSON.stringify(started));
    ok(started.output.length < 10_000, `${started.output.length} characters`);
    const logs = await box.call("process_logs", { id: "p1", lines: 1000 });
    ok(logs.status === "SUCCEEDED", JSON.stringify(logs));
    ok(logs.output.length < 50_000, `${logs.output.length} characters`);
    match(logs.output, /older characters were dropped/);
    match(logs.output, /end/);
  });
});
