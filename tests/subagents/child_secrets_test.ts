/** What a child is started with never shows a secret to other local users (`ps`). */
import { ok } from "node:assert/strict";
import { StartedChild } from "../../src/harness/subagents/child_process.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { until } from "./_helpers.ts";

Deno.test("StartedChild keeps the base URL's password and key off the child's command line", async () => {
  const ws = await tempWorkspace();
  const baseUrl = "http://me:pw-S3CRET@127.0.0.1:9/v1?key=K3Y-S3CRET";
  const child = new StartedChild({ cwd: ws.dir, baseUrl }, true);
  try {
    // The launcher execs Deno under its own pid: its command line once it did.
    let command = "";
    await until(async () => {
      // What every local user sees (/proc needs more of Deno than these tests get).
      const ps = await new Deno.Command("ps", {
        args: ["-ww", "-o", "args=", "-p", String(child.process.pid)],
        stdout: "piped",
      }).output();
      command = new TextDecoder().decode(ps.stdout).trim();
      return / run .* child/.test(command);
    }, "the launcher's exec");
    ok(!command.includes("S3CRET"), command);
    // The launcher still lets the child reach the model host.
    ok(/--allow-net=[^ ]*127\.0\.0\.1:9/.test(command), command);
  } finally {
    child.kill();
    await child.process.status;
    await child.stderrRead;
    await ws.cleanup();
  }
});
