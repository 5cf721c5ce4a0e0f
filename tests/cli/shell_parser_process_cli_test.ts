/**
 * `tern run` parses a command line that is not plain in the shell parser process, never in its
 * own: tree-sitter's memory stays out of tern's process, and the parser ends with tern.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { comesTrue, isAlive } from "../harness/_processes.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { scriptedRunArgs, tempWorkspace, ternCommand } from "../support/tern_process.ts";

/** The pids and command lines of `pid`'s children. */
function children(pid: number): { pid: number; args: string }[] {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "pid=,args=", "--ppid", `${pid}`] })
    .outputSync();
  return new TextDecoder().decode(stdout).split("\n").filter((line) => line.trim() !== "")
    .map((line) => {
      const [pid, ...args] = line.trim().split(/\s+/);
      return { pid: Number(pid), args: args.join(" ") };
    });
}

testWith(
  [bwrapNeed],
  "tern run parses a loop in the shell parser process, which ends with tern",
  async () => {
    // Only tree-sitter reads a loop: the plain scanner does not.
    const command = 'for f in out.txt; do echo written > "$f"; done';
    let tern: Deno.ChildProcess | undefined;
    const parsers: number[] = [];
    const script = (request: ModelRequest) =>
      request.messages.some((m) => m.role === "tool")
        ? { text: "done" }
        : { toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command }) }] };
    const server = await startScriptedServer(script, {
      chunkDelayMs: 0,
      // The command has run when its result comes back: tern still runs, and so does its parser.
      beforeReply: (request) => {
        if (tern && request.messages.some((m) => m.role === "tool")) {
          parsers.push(
            ...children(tern.pid).filter((child) => /shell[-_]parser|parser_main/.test(child.args))
              .map((child) => child.pid),
          );
        }
        return Promise.resolve();
      },
    });
    const ws = await tempWorkspace();
    try {
      const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
      tern = ternCommand(scriptedRunArgs(server.baseUrl, "write it"), { cwd: ws.dir, env }, "null")
        .spawn();
      const out = await tern.output();
      equal(out.code, 0, new TextDecoder().decode(out.stderr));
      equal(await Deno.readTextFile(join(ws.dir, "out.txt")), "written\n");
      equal(parsers.length, 1, "tern's process has no shell parser child while the loop runs");
      ok(await comesTrue(() => !isAlive(parsers[0])), "the shell parser process outlives tern");
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
