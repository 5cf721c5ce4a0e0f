/**
 * `tern acp` and an editor that sends requests but does not read: the answers must not pile up
 * in tern's memory without bound. tern stops reading once many answers wait to be written.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_UNANSWERED } from "../../src/cli/acp/flow.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { peakMiB } from "../support/peak_memory.ts";

Deno.test("tern acp holds no pile of answers for an editor that sends requests but does not read", async () => {
  const server = await startScriptedServer([], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  const args = ["acp", "--base-url", server.baseUrl, "-m", "scripted"];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...declaredFlags(env, { cwd: ws.dir, args }), join(ROOT, "main.ts"), ...args],
    cwd: ws.dir,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const count = 150_000;
    ok(count > 100 * MAX_UNANSWERED);
    const lines: string[] = [];
    for (let id = 1; id <= count; id++) {
      lines.push(
        `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":1}}\n`,
      );
    }
    const writer = child.stdin.getWriter();
    const written = (async () => {
      await writer.write(new TextEncoder().encode(lines.join("")));
    })();
    // tern stops reading once many answers wait (the write then waits too); a few seconds let
    // it take what it would.
    await Promise.race([written, new Promise((resolve) => setTimeout(resolve, 4_000))]);
    const peak = await peakMiB(child.pid);
    // Reading again, every request is answered.
    const reader = child.stdout.getReader();
    const decoder = new TextDecoder();
    let tail = "";
    let answers = 0;
    while (answers < count) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = tail + decoder.decode(value, { stream: true });
      const parts = text.split("\n");
      tail = parts.pop()!;
      answers += parts.length;
    }
    equal(answers, count);
    await written;
    await writer.close();
    equal((await child.status).code, 0);
    ok(peak < 180, `tern's largest size was ${peak.toFixed(0)} MiB`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await server.close();
    await ws.cleanup();
  }
});
