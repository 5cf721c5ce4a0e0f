/**
 * The code index tools in a real `tern run` against the scripted model server: the model sees
 * them and the line on when to use them, a search builds the index, and the agent's own write
 * and a command's new file are found by the next search in the same turn.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedToolCall } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { bwrapTest } from "../sandbox/_bwrap_helpers.ts";

function call(name: string, args: Record<string, unknown>): { toolCalls: ScriptedToolCall[] } {
  return { toolCalls: [{ name, arguments: JSON.stringify(args) }] };
}

bwrapTest("tern run: code_search finds what the agent's write and command just made", async () => {
  const ws = await tempWorkspace();
  const server = await startScriptedServer([
    call("code_search", { query: "harbor tax" }),
    call("write", { path: "src/fees.ts", content: "export function levyDockFee() {}\n" }),
    call("code_search", { query: "levy dock fee" }),
    call("bash", { command: "printf 'export function chargeMooringRent() {}\\n' > src/rent.ts" }),
    call("code_symbols", { name: "chargeMooringRent" }),
    { text: "done" },
  ], { chunkDelayMs: 0 });
  try {
    await Deno.mkdir(join(ws.dir, "src"));
    await Deno.writeTextFile(
      join(ws.dir, "src", "tax.ts"),
      "/** Levies the harbor tax on a ship. */\nexport function levyHarborTax() {}\n",
    );
    const run = await runTern(
      scriptedRunArgs(server.baseUrl, "go"),
      { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home } },
    );
    equal(run.code, 0, run.stderr);
    equal(server.requests.length, 6);
    const first = server.requests[0].modelRequest;
    const names = (first.tools ?? []).map((tool) => tool.name);
    ok(names.includes("code_search") && names.includes("code_symbols"), names.join(","));
    match(String(first.messages[0].content), /start with `code_search`/);
    /** The tool result the model got back before request `n`. */
    const result = (n: number) => {
      const messages = server.requests[n].modelRequest.messages;
      return String(messages[messages.length - 1].content);
    };
    match(result(1), /src\/tax\.ts:2 {2}FUNCTION levyHarborTax/);
    match(result(3), /src\/fees\.ts:1 {2}FUNCTION levyDockFee/);
    match(result(5), /src\/rent\.ts:1 {2}FUNCTION chargeMooringRent/);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
