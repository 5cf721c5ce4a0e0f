/**
 * `tern acp` against an editor that sends a response to no request with an escape sequence for
 * its id: the SDK logs the id on tern's stderr, where a terminal would obey it (set the window's
 * title, clear the screen); it is written with the sequence removed, as tern's own lines are.
 */
import { equal, ok } from "node:assert/strict";
import { spawnLineProcess } from "../support/line_process.ts";
import { tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern acp writes no escape sequence an editor sent to its stderr", async () => {
  const ws = await tempWorkspace();
  const acp = spawnLineProcess(["acp", "--base-url", "http://127.0.0.1:9", "-m", "scripted"], {
    cwd: ws.dir,
    env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" },
  });
  let finished = false;
  try {
    await acp.send({ jsonrpc: "2.0", id: "\x1b]0;PWNED\x07\x1b[2Jforged", result: {} });
    await acp.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await acp.waitFor((line) => line.id === 1);
    const { code, stderr } = await acp.finish();
    finished = true;
    equal(code, 0, stderr);
    ok(stderr.includes("forged"), stderr);
    ok(!stderr.includes("\x1b") && !stderr.includes("\x07"), JSON.stringify(stderr));
  } finally {
    if (!finished) await acp.kill();
    await ws.cleanup();
  }
});
