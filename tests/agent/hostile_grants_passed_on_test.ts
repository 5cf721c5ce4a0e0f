/**
 * A command deny rule against programs that run the rest of their command line (`flock`,
 * `taskset`, `busybox`, `setpriv`, …): tern peels only the wrappers it knows, and such programs
 * are many, so an unvetted program that carries the rule's words is taken to run them and the
 * call is denied, even under --mode bypass (which would allow anything else).
 */
import { deepEqual, equal } from "node:assert/strict";
import { expectError, withGate } from "./_gate_box.ts";

Deno.test("PermissionGate in bypass mode: a command deny rule holds against a program that runs its arguments", async () => {
  await withGate(
    {
      mode: "bypass",
      rules: [
        { action: "deny", command: "touch", reason: "no touching" },
        { action: "deny", command: "git push" },
      ],
    },
    async (box) => {
      const commands = [
        "flock /tmp/tern-flock-test touch one",
        "taskset 1 touch two",
        "setpriv --reuid=0 touch three",
        "busybox touch four",
        "fakeroot -- touch five",
        "chrt -o 0 /usr/bin/touch six",
        "prlimit --nofile=64 touch seven && echo done",
        "taskset 1 git push origin main",
      ];
      for (const command of commands) {
        const obs = await box.call("bash", { command });
        expectError(
          obs,
          "POLICY_DENIED",
          /cannot check the rule \(deny command "(touch|git push)"\)/,
        );
        expectError(
          obs,
          "POLICY_DENIED",
          /may run "(touch|\/usr\/bin\/touch|git push)" from its arguments/,
        );
      }
      const made: string[] = [];
      for await (const entry of Deno.readDir(box.ws)) made.push(entry.name);
      deepEqual(made, []);
      // The words as data of a program that only reads, or another git command, still run.
      for (
        const command of [
          "echo touch one",
          "grep -c touch /dev/null || true",
          "taskset 1 git --version",
        ]
      ) {
        equal((await box.call("bash", { command })).status, "SUCCEEDED", command);
      }
    },
  );
});
