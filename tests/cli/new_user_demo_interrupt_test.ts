/**
 * ^C during `tern demo`, as a new user might press it: the demo ends where it is, exit 130,
 * without showing or starting the steps after, and leaves nothing in the temporary folder.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { tempWorkspace, ternCommand } from "../support/tern_process.ts";

Deno.test("^C during the demo's first message stops the demo there, exit 130, nothing kept", async () => {
  const ws = await tempWorkspace();
  const tmp = join(ws.dir, "tmp");
  await Deno.mkdir(tmp);
  try {
    const child = ternCommand(
      ["demo"],
      { cwd: ws.dir, env: { HOME: ws.home, TMPDIR: tmp } },
      "null",
    )
      .spawn();
    const stderr = new Response(child.stderr).text();
    let out = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      const had = out.includes("1. the first message");
      out += decoder.decode(chunk, { stream: true });
      if (!had && out.includes("1. the first message")) child.kill("SIGINT");
    }
    const { code } = await child.status;
    equal(code, 130, out + (await stderr));
    ok(out.includes("1. the first message"), out);
    ok(!out.includes("2. the plan"), out);
    ok(!/^ +3\. session \w+ resumed/m.test(out), out);
    ok(!out.includes("KEPT"), out);
    deepEqual(await Array.fromAsync(Deno.readDir(tmp)), []);
  } finally {
    await ws.cleanup();
  }
});
