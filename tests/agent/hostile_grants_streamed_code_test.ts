/**
 * A command deny rule against code a shell or `source` reads from a stream: like `bash` reading
 * standard input, what runs is known only when it runs, so the rule cannot be checked and the
 * call is denied, even under --mode bypass (which would allow anything else).
 */
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";
import { expectError, withGate } from "./_gate_box.ts";

Deno.test("PermissionGate in bypass mode: a command deny rule holds against code read from a stream", async () => {
  await withGate(
    { mode: "bypass", rules: [{ action: "deny", command: "touch", reason: "no touching" }] },
    async (box) => {
      const commands = [
        "source /dev/stdin <<< 'touch one'",
        "echo 'touch two' | . /dev/fd/0",
        "echo 'touch three' | sh /dev/stdin",
        "bash <(echo touch four)",
        "command source /proc/self/fd/0 <<< 'touch five'",
      ];
      for (const command of commands) {
        const obs = await box.call("bash", { command });
        expectError(obs, "POLICY_DENIED", /cannot check the rule \(deny command "touch"\)/);
      }
      const made: string[] = [];
      for await (const entry of Deno.readDir(box.ws)) made.push(entry.name);
      deepEqual(made, []);
      // Code in a file stays a script the rule does not see into (a known limit), as before.
      await Deno.writeTextFile(join(box.ws, "ok.sh"), "echo fine\n");
      deepEqual((await box.call("bash", { command: "sh ok.sh" })).status, "SUCCEEDED");
    },
  );
});
