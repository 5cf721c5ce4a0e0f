/**
 * One round's tool results, each within the per-result limit, together over the model's window:
 * the model gets them held to half of its window, each saved whole where `read` can open it, and
 * the run and the session go on (before, every request was over the window, for good). A real
 * `tern run` with real commands in the sandbox, against a scripted model.
 */
import { equal, ok } from "node:assert/strict";
import { estimateTokens } from "../../src/context/tokens.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

const WINDOW = 40_000;
const CALLS = 12;

testWith(
  [bwrapNeed],
  "a round of tool results larger than the window is held to half of it",
  async () => {
    const seen: ModelRequest[] = [];
    const server = await startScriptedServer((request) => {
      seen.push(request);
      if (request.messages.some((message) => message.role === "tool")) return { text: "done" };
      return {
        toolCalls: Array.from({ length: CALLS }, (_, i) => ({
          id: `c${i}`,
          name: "bash",
          // About 12,000 characters of base64 each: within the 30,000 of one result.
          arguments: JSON.stringify({
            command: `echo part${i}; head -c 9000 /dev/urandom | base64 -w0`,
          }),
        })),
      };
    }, { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    try {
      const env = {
        TERN_HOME: ws.home,
        HOME: ws.home,
        TERN_API_KEY: "k",
        TERN_CONTEXT_WINDOW: String(WINDOW),
      };
      const run = await runTern(scriptedRunArgs(server.baseUrl, "make noise"), {
        cwd: ws.dir,
        env,
      });
      equal(run.code, 0, run.stderr);
      const last = seen.at(-1)!;
      const results = last.messages.filter((message) => message.role === "tool");
      equal(results.length, CALLS);
      const tokens = results.reduce((sum, message) => sum + estimateTokens(message.content), 0);
      ok(tokens <= WINDOW / 2 + CALLS * 100, `${tokens} tokens of results`);
      for (const [i, message] of results.entries()) {
        ok(message.content.slice(0, 100).includes(`part${i}`), message.content.slice(0, 80));
        const path = /saved in "([^"]+)"/.exec(message.content)?.[1];
        ok(path !== undefined, message.content.slice(-300));
        ok((await Deno.readTextFile(path)).length > 12_000);
      }
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
