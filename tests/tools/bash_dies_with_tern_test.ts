/**
 * End-to-end: a command `bash` runs without a sandbox (`--no-sandbox`), and what it started,
 * end when the real `tern` is killed by SIGKILL mid-command: the watchdog on tern's liveness
 * pipe kills its group (inside bubblewrap, `--die-with-parent` does).
 */
import { equal, ok } from "node:assert/strict";
import { startScriptedServer } from "../support/scripted_server.ts";
import { scriptedRunArgs, tempWorkspace, ternCommand } from "../support/tern_process.ts";
import { comesTrue, descendants } from "../harness/_processes.ts";

/** Live host processes whose command line holds `text` (from `ps`). */
function withArgs(text: string): number[] {
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).outputSync();
  return new TextDecoder().decode(ps.stdout).split("\n").flatMap((line) => {
    const found = line.trim().match(/^(\d+)\s+(\S+)\s+(.*)$/);
    return found !== null && !found[2].startsWith("Z") && found[3].includes(text)
      ? [Number(found[1])]
      : [];
  });
}

Deno.test("a command run without a sandbox and its child end when tern is killed by SIGKILL", async () => {
  const ws = await tempWorkspace();
  const mark = `tern-dies-${crypto.randomUUID()}`;
  // The sleep, named by the mark, is the command's child; the command waits for it.
  const command = `(exec -a ${mark} sleep 300) & wait`;
  const model = await startScriptedServer([
    { toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command }) }] },
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  const args = [...scriptedRunArgs(model.baseUrl, "go"), "--no-sandbox"];
  const tern = ternCommand(args, { cwd: ws.dir, env }, "null").spawn();
  try {
    ok(await comesTrue(() => withArgs(mark).length > 0, 60_000), "the command's sleep runs");
    ok(descendants(tern.pid).includes(withArgs(mark)[0]), "the sleep was started by this tern");
    tern.kill("SIGKILL");
    equal((await tern.status).signal, "SIGKILL");
    ok(await comesTrue(() => withArgs(mark).length === 0, 10_000), "the sleep outlived tern");
  } finally {
    try {
      tern.kill("SIGKILL");
    } catch {
      // Gone already.
    }
    await tern.output().catch(() => {});
    for (const pid of withArgs(mark)) Deno.kill(pid, "SIGKILL");
    await model.close();
    await ws.cleanup();
  }
});
