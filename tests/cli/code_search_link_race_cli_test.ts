/**
 * End-to-end: a background command of the model exchanges a workspace folder with a symlink to a
 * folder the person's deny rule hides, as fast as it can, while the model searches the code. The
 * code index reads each file in the tool worker, in bubblewrap's view, where the hidden folder is
 * not there: no answer carries its files. In tern's own process the walk and the read were raced
 * past every path check from the first search on. Real bubblewrap, real processes; the model is
 * scripted.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { flipperNeed } from "../support/link_flipper.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

const SECRET = "SECRETVALUEZQX";

/** Exchanges `docs` and `docs_link` (a link to `secrets`) until killed. */
const FLIPPER = "ln -s secrets docs_link; echo up; exec python3 -c '" +
  "import ctypes, os\n" +
  "libc = ctypes.CDLL(None, use_errno=True)\n" +
  'nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]\n' +
  "while True:\n" +
  '    libc.syscall(nr, -100, b"docs", -100, b"docs_link", 2)\n' +
  "'";

function call(name: string, args: Record<string, unknown>, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

testWith(
  [bwrapNeed, flipperNeed],
  "code_search never answers with a denied folder's files while a command swaps a folder with a link to it",
  async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.mkdir(join(ws.dir, "secrets"));
      await Deno.mkdir(join(ws.dir, "docs"));
      for (let i = 0; i < 100; i++) {
        const secret = `export const apiKey${i} = "${SECRET}${i}";\n`;
        await Deno.writeTextFile(join(ws.dir, "secrets", `k${i}.ts`), secret);
        await Deno.writeTextFile(join(ws.dir, "docs", `k${i}.ts`), `export const note${i} = 1;\n`);
      }
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        JSON.stringify({ rules: [{ action: "deny", path: "secrets/**" }] }),
      );
      const replies: ScriptedReply[] = [
        call("bash", { command: FLIPPER, run_in_background: true, ready_text: "up" }, "flip"),
      ];
      // A command in between: the next search walks the workspace again.
      for (let i = 0; i < 8; i++) {
        replies.push(call("bash", { command: "true" }, `b${i}`));
        replies.push(call("code_search", { query: "apiKey" }, `s${i}`));
      }
      replies.push({ text: "done" });
      const server = await startScriptedServer(replies, { chunkDelayMs: 0 });
      try {
        const run = await runTern(scriptedRunArgs(server.baseUrl, "go"), {
          cwd: ws.dir,
          env: { TERN_HOME: ws.home, HOME: ws.home },
        });
        equal(run.code, 0, run.stderr);
        const searches = server.requests.map((request) => request.modelRequest.messages.at(-1))
          .filter((message) => message?.role === "tool" && message.name === "code_search");
        equal(searches.length, 8);
        for (const message of searches) ok(!message!.content.includes(SECRET), message!.content);
      } finally {
        await server.close();
      }
    } finally {
      await ws.cleanup();
    }
  },
);
