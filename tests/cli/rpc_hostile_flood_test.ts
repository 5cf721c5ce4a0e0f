/**
 * `tern rpc` and a client that sends but does not read: the answers to its commands must not pile
 * up in tern's memory without bound. tern stops reading commands while many answers wait.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { declaredFlags, ROOT, tempWorkspace } from "../support/tern_process.ts";
import { peakMiB } from "../support/peak_memory.ts";

Deno.test("tern rpc holds no pile of answers for a client that sends commands but does not read", async () => {
  const server = await startScriptedServer([], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  const args = ["rpc", "--base-url", server.baseUrl, "-m", "scripted"];
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
    const reader = child.stdout.getReader();
    // The ready line: tern is serving.
    await reader.read();
    // 150,000 get_state commands (3 MB) ask for about 90 MB of answers, none of them read.
    const count = 150_000;
    const command = new TextEncoder().encode('{"type":"get_state"}\n'.repeat(count));
    const last = new TextEncoder().encode('{"type":"get_state","id":"last"}\n');
    const writer = child.stdin.getWriter();
    const written = (async () => {
      await writer.write(command);
      await writer.write(last);
      await writer.close();
    })();
    // tern stops taking commands once many answers wait (the write then waits too); a few
    // seconds let it take what it would.
    await Promise.race([written, new Promise((resolve) => setTimeout(resolve, 4_000))]);
    const peak = await peakMiB(child.pid);
    // Reading again, every command is answered, the last one too.
    const decoder = new TextDecoder();
    let tail = "";
    let answers = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = tail + decoder.decode(value, { stream: true });
      const lines = text.split("\n");
      tail = lines.pop()!;
      answers += lines.length;
    }
    await written;
    equal((await child.status).code, 0);
    equal(answers, count + 1);
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
