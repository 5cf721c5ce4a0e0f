/**
 * A repository whose `.tern` is a link (git stores links: a clone brings `.tern -> /etc`): the
 * restore's view mounts what commands may not write read-only again, and a link there must
 * neither stop every rewind nor let a restore write where the link leads inside the workspace.
 * Real files, the real restore process (in its bubblewrap view where that works).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runRestore } from "../../src/harness/rewind/restore_ops.ts";
import { temp } from "../support/host_tool.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("runRestore() restores files in a workspace whose .tern is a link out of it", async () => {
  for (const target of ["/etc", "../../../../../../etc", "/nonexistent"]) {
    const ws = Deno.realPathSync(await temp("tern-ws-"));
    try {
      Deno.mkdirSync(join(ws, "src"));
      Deno.symlinkSync(target, join(ws, ".tern"));
      const answer = await runRestore(ws, [
        { op: "write", path: "a.txt", data: bytes("one\n"), executable: false },
        { op: "write", path: "src/b.txt", data: bytes("two\n"), executable: false },
      ]);
      deepEqual(answer, { done: 2 }, target);
      equal(Deno.readTextFileSync(join(ws, "src", "b.txt")), "two\n");
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  }
});

Deno.test("runRestore() keeps what a .tern link leads to inside the workspace as commands see it", async () => {
  const ws = Deno.realPathSync(await temp("tern-ws-"));
  try {
    Deno.mkdirSync(join(ws, "settings"));
    Deno.writeTextFileSync(join(ws, "settings", "config.jsonc"), "{}\n");
    Deno.symlinkSync("settings", join(ws, ".tern"));
    const answer = await runRestore(ws, [
      { op: "write", path: "a.txt", data: bytes("one\n"), executable: false },
      { op: "write", path: "settings/config.jsonc", data: bytes('{"x":1}\n'), executable: false },
    ]);
    equal(answer.done, 1);
    equal(Deno.readTextFileSync(join(ws, "a.txt")), "one\n");
    // Read-only in the view, as for commands (without bubblewrap the write goes through).
    const viewed = answer.error !== undefined;
    ok(!viewed || /Read-only/.test(answer.error!), answer.error);
    if (viewed) equal(Deno.readTextFileSync(join(ws, "settings", "config.jsonc")), "{}\n");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
