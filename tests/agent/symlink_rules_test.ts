/**
 * The person's path rules hold for the path a call really touches: a link inside the workspace
 * (shipped by the repository, or made by a command) cannot take a call around them.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { expectError, withGate } from "./_gate_box.ts";

Deno.test("PermissionGate decides a path through a link by where it leads too", async () => {
  await withGate({
    mode: "bypass",
    rules: [
      { action: "deny", tool: "write", path: "package.json", reason: "never touch package.json" },
      { action: "deny", path: "secrets/**", reason: "secrets stay unread" },
      { action: "deny", tool: "write", path: ".github/**", reason: "no CI changes" },
    ],
  }, async (box) => {
    await Deno.writeTextFile(join(box.ws, "package.json"), "{}\n");
    await Deno.mkdir(join(box.ws, "secrets"));
    await Deno.writeTextFile(join(box.ws, "secrets", "notes.txt"), "merger plan\n");
    await Deno.mkdir(join(box.ws, "docs"));
    await Deno.symlink("../package.json", join(box.ws, "docs", "pj"));
    await Deno.symlink("../secrets", join(box.ws, "docs", "s"));
    // Dangling: the folder it names does not exist yet, and the write would create it.
    await Deno.symlink("../.github/workflows", join(box.ws, "docs", "wf"));
    const write = await box.call("write", { path: "docs/pj", content: '{"scripts":{}}\n' });
    expectError(write, "POLICY_DENIED", /never touch package.json/);
    equal(await Deno.readTextFile(join(box.ws, "package.json")), "{}\n");
    const read = await box.call("read", { path: "docs/s/notes.txt" });
    expectError(read, "POLICY_DENIED", /secrets stay unread/);
    const planted = await box.call("write", { path: "docs/wf/ci.yml", content: "on: push\n" });
    expectError(planted, "POLICY_DENIED", /no CI changes/);
    // A path without a link is decided as before.
    equal(
      (await box.call("write", { path: "docs/other.txt", content: "x\n" })).status,
      "SUCCEEDED",
    );
  });
});
