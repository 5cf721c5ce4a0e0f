/**
 * End-to-end: memory files through real `tern run` and `tern context` processes against the
 * scripted model server: the index reaches the system prompt, a topic's body only through `read`.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

testWith(
  [bwrapNeed],
  "tern run gives the memory index in the system prompt and a topic file's body when the model reads it",
  async () => {
    const script = (_: ModelRequest, index: number): ScriptedReply =>
      index === 0
        ? {
          toolCalls: [{
            name: "read",
            arguments: JSON.stringify({ path: ".tern/memory/deploy.md" }),
          }],
        }
        : { text: "done" };
    const server = await startScriptedServer(script, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    const tern = (args: string[]) =>
      runTern(args, {
        cwd: ws.dir,
        env: {
          TERN_HOME: ws.home,
          HOME: ws.home,
          TERN_API_KEY: "sk-test-memfiles",
          TERN_BASE_URL: server.baseUrl,
          TERN_MODE: "bypass",
        },
      });
    try {
      await write(join(ws.home, "memory.md"), "USER-MEMORY-MARK");
      await write(join(ws.dir, "MEMORY.md"), "# Memory\nDeploys: see deploy.md");
      await write(join(ws.dir, ".tern", "memory", "deploy.md"), "# Deploying\nTOPIC-BODY-MARK");
      const run = await tern(["run", "deploy it"]);
      equal(run.code, 0, run.stderr);
      const system = server.requests[0].modelRequest.messages[0].content;
      match(system, /USER-MEMORY-MARK/);
      match(system, /Deploys: see deploy\.md/);
      match(system, /- \.tern\/memory\/deploy\.md: Deploying/);
      ok(!system.includes("TOPIC-BODY-MARK"), "the index only");
      const result = server.requests[1].modelRequest.messages.find((m) => m.role === "tool");
      match(result?.content ?? "", /TOPIC-BODY-MARK/);
      const context = await tern(["context"]);
      equal(context.code, 0, context.stderr);
      match(context.stdout, /memory file .*memory\.md \(user\)/);
      match(context.stdout, /memory file .*MEMORY\.md \(project\)/);
      match(context.stdout, /memory topics index \(1 files, read when needed\)/);
      match(context.stdout, /\n {2}\.tern\/memory\/deploy\.md: Deploying/);
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
