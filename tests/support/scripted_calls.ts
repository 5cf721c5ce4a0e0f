/**
 * A real `tern run --mode bypass` against a scripted model that makes given tool calls, one per
 * round, then answers "done": what the model was sent back for each call, every request as
 * text, and how the run ended.
 */
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { startScriptedServer } from "./scripted_server.ts";
import { runTern } from "./tern_process.ts";

/** A tool call the scripted model makes. */
export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
}

/** What {@linkcode runScriptedCalls} saw. */
export interface ScriptedCallsRun {
  /** The tool result sent back for each call, in order. */
  results: string[];
  /** Every request the model server received, as JSON text. */
  requests: string;
  code: number;
  stderr: string;
}

/** Runs `calls` through `tern run` in `dir`, with `env` (HOME and TERN_HOME are `home`). */
export async function runScriptedCalls(
  place: { dir: string; home: string },
  calls: readonly ScriptedCall[],
  env: Record<string, string> = {},
): Promise<ScriptedCallsRun> {
  const results: string[] = [];
  let requests = "";
  const server = await startScriptedServer(
    ((request: ModelRequest, i: number) => {
      requests += JSON.stringify(request);
      if (i > 0) {
        const last = request.messages.at(-1);
        results.push(last?.role === "tool" ? last.content : "");
      }
      const call = calls[i];
      if (call === undefined) return { text: "done" };
      return {
        toolCalls: [{ id: `c${i}`, name: call.name, arguments: JSON.stringify(call.args) }],
      };
    }) as unknown as ScriptedReply[],
    { chunkDelayMs: 0 },
  );
  try {
    const run = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", "--mode", "bypass", "go"],
      { cwd: place.dir, env: { TERN_HOME: place.home, HOME: place.home, ...env } },
    );
    return { results, requests, code: run.code, stderr: run.stderr };
  } finally {
    await server.close();
  }
}
