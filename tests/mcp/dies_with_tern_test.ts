/**
 * End-to-end: a stdio MCP server, and what it started, end when the real `tern` is killed by
 * SIGKILL mid-call (no `close()` runs then): outside bubblewrap the watchdog on tern's liveness
 * pipe kills its group, inside it bubblewrap's `--die-with-parent` ends the sandbox.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { scriptedRunArgs, tempWorkspace, ternCommand } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { faultServerCommand } from "../fixtures/mcp/fault_server.ts";
import { anyAlive, comesTrue, descendants, isAlive } from "../harness/_processes.ts";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** Host processes whose command line holds `text` (from `ps`). */
function withArgs(text: string): number[] {
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="] }).outputSync();
  return new TextDecoder().decode(ps.stdout).split("\n").flatMap((line) => {
    const found = line.trim().match(/^(\d+)\s+(\S+)\s+(.*)$/);
    return found !== null && !found[2].startsWith("Z") && found[3].includes(text)
      ? [Number(found[1])]
      : [];
  });
}

function killIfThere(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/**
 * Runs `tern run` with the fault server as MCP server "fault" (`sandbox` as given), lets it
 * start `sleep 300` and then wait in a 120 s call, kills tern by SIGKILL, and returns the
 * server's processes as they were (host pids: the server, its sleep, bubblewrap's or the
 * watchdog's), whether they all ended within 10 s, and what is left of the liveness pipes'
 * folders in tern's TMPDIR then.
 */
async function killTernMidCall(
  sandbox: boolean,
): Promise<{ tree: number[]; ended: boolean; pipesLeft: string[] }> {
  const ws = await tempWorkspace();
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-dies-tmp-" }));
  const pipesLeft = () =>
    [...Deno.readDirSync(tmp)].map((entry) => entry.name)
      .filter((name) => name.startsWith("tern-liveness-"));
  // A mark on the server's command line, to find it on the host (the sleep is its child).
  const mark = `tern-dies-${crypto.randomUUID()}`;
  const server = faultServerCommand("ok", sandbox ? { workspace: ws.dir } : {});
  const config = { ...server, args: [...server.args, mark], ...(sandbox ? { sandbox } : {}) };
  await Deno.writeTextFile(
    join(ws.home, "mcp.json"),
    JSON.stringify({ servers: { fault: config } }),
  );
  const model = await startScriptedServer([
    call("mcp__fault__spawn", {}, "c1"),
    call("mcp__fault__slow", { ms: 120_000 }, "c2"),
    { text: "done" },
  ], { chunkDelayMs: 0 });
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test", TMPDIR: tmp };
  const tern = ternCommand(scriptedRunArgs(model.baseUrl, "go"), { cwd: ws.dir, env }, "null")
    .spawn();
  let tree: number[] = [];
  try {
    // The second request carries the spawn's result: the sleep runs, the slow call starts.
    ok(await comesTrue(() => model.requests.length >= 2, 60_000), "tern asked the model twice");
    const marked = withArgs(mark);
    ok(marked.length > 0, "the MCP server runs");
    tree = [...new Set(marked.flatMap(descendants))];
    ok(tree.length >= 2 && tree.every(isAlive), `the server and its sleep run: ${tree}`);
    ok(descendants(tern.pid).includes(marked[0]), "the server was started by this tern");
    tern.kill("SIGKILL");
    equal((await tern.status).signal, "SIGKILL");
    const ended = await comesTrue(() => !anyAlive(tree), 10_000);
    await comesTrue(() => pipesLeft().length === 0, 5_000);
    return { tree, ended, pipesLeft: pipesLeft() };
  } finally {
    killIfThere(tern.pid);
    await tern.output().catch(() => {});
    // Whatever a failing run left behind goes, so it cannot disturb other tests.
    for (const pid of [...withArgs(mark), ...tree]) killIfThere(pid);
    await model.close();
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test("an MCP server and the process it started end when tern is killed by SIGKILL", async () => {
  const { tree, ended, pipesLeft } = await killTernMidCall(false);
  ok(ended, `still running 10 s after tern's SIGKILL: ${tree.filter(isAlive)}`);
  deepEqual(pipesLeft, [], "the watchdog removes its liveness pipe");
});

testWith(
  [bwrapNeed],
  "a sandboxed MCP server and the process it started end when tern is killed by SIGKILL",
  async () => {
    const { tree, ended } = await killTernMidCall(true);
    ok(ended, `still running 10 s after tern's SIGKILL: ${tree.filter(isAlive)}`);
  },
);
