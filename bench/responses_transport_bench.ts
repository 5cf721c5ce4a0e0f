/**
 * The Responses API over SSE against WebSocket on a 20-round tool-calling run with the scripted
 * server on 127.0.0.1: the bytes of each round's request (HTTP body or WebSocket message) and
 * each round's latency (from the request to `done`), per round and in total. Each round's
 * answer is one tool call; each tool result is `--result-bytes` of text (a file read), after a
 * system prompt and tool definitions of realistic size. Runs alternate between the transports.
 * Over WebSocket the first round goes over HTTP (the socket opens beside it) and the second
 * sends the whole conversation on the socket; later rounds send only their new items.
 * Run: deno run --no-prompt --allow-read --allow-net=127.0.0.1 --allow-env --allow-sys
 * bench/responses_transport_bench.ts [--rounds 20] [--runs 10] [--result-bytes 2000] [--json]
 */
import { parseArgs } from "node:util";
import type { Message } from "../src/core/messages.ts";
import {
  createOpenAiResponsesProvider,
  type ResponsesTransport,
} from "../src/llm/openai_responses.ts";
import type { ScriptedReply } from "../src/llm/scripted.ts";
import type { ModelRequest, ToolSpec } from "../src/llm/types.ts";
import { startScriptedServer } from "../tests/support/scripted_server.ts";
import { stats } from "./_stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "20" },
    runs: { type: "string", default: "10" },
    "result-bytes": { type: "string", default: "2000" },
    json: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(values.rounds);
const RUNS = Number(values.runs);
const RESULT_BYTES = Number(values["result-bytes"]);

const SYSTEM = "You are a coding agent. ".repeat(400); // about 9.6 KB, like tern's prompt
const TOOLS: ToolSpec[] = ["read", "write", "edit", "bash", "grep", "glob", "list"].map((name) => ({
  name,
  description: `The ${name} tool. `.repeat(20),
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "A path in the workspace" } },
    required: ["path"],
  },
}));

interface RunResult {
  bytes: number[];
  latencyMs: number[];
  transports: string[];
}

async function run(transport: ResponsesTransport): Promise<RunResult> {
  const script = (_request: ModelRequest, index: number): ScriptedReply =>
    index === ROUNDS - 1
      ? { text: "All files read." }
      : { toolCalls: [{ name: "read", arguments: JSON.stringify({ path: `src/f${index}.ts` }) }] };
  const server = await startScriptedServer(script, { chunkDelayMs: 0 });
  const provider = createOpenAiResponsesProvider({
    baseUrl: server.baseUrl,
    apiKey: "sk-bench",
    transport,
  });
  const messages: Message[] = [
    { role: "system", content: SYSTEM },
    { role: "user", content: "Read every file and summarise them" },
  ];
  const latencyMs: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // The first round goes over HTTP while the socket opens beside it; a real model's first
      // answer takes far longer than the opening, so the bench waits for it (not timed).
      while (transport === "websocket" && round === 1 && server.sockets.opened === 0) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const request: ModelRequest = {
        model: "gpt-bench",
        messages: [...messages],
        tools: TOOLS,
        cacheKey: "tern-bench",
      };
      const start = performance.now();
      let answer: Message | undefined;
      for await (const event of provider.stream(request)) {
        if (event.type === "done") answer = event.message;
        if (event.type === "error") throw new Error(event.message);
      }
      latencyMs.push(performance.now() - start);
      if (answer === undefined || answer.role !== "assistant") throw new Error("no answer");
      messages.push(answer);
      for (const call of answer.toolCalls ?? []) {
        const content = `// ${call.arguments}\n` + "x".repeat(RESULT_BYTES);
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content });
      }
    }
    return {
      bytes: server.requests.map((r) => r.bytes),
      latencyMs,
      transports: server.requests.map((r) => r.transport ?? "http"),
    };
  } finally {
    await provider.close?.();
    await server.close();
  }
}

const results: Record<"sse" | "websocket", RunResult[]> = { sse: [], websocket: [] };
// One warm-up of each (module loading, the first connection), then alternating runs.
await run("sse");
await run("websocket");
for (let i = 0; i < RUNS; i++) {
  results.sse.push(await run("sse"));
  results.websocket.push(await run("websocket"));
}
for (const result of results.websocket) {
  if (result.transports.slice(1).some((t) => t !== "websocket")) {
    throw new Error("a round after the first left the socket");
  }
}

const perRound = (runs: RunResult[], pick: (r: RunResult) => number[]) =>
  Array.from({ length: ROUNDS }, (_, round) => stats(runs.map((r) => pick(r)[round])));
const summary = {
  rounds: ROUNDS,
  runs: RUNS,
  resultBytes: RESULT_BYTES,
  load: Deno.loadavg().map((n) => Math.round(n * 10) / 10),
  sse: {
    bytesPerRound: results.sse[0].bytes,
    totalBytes: results.sse[0].bytes.reduce((a, b) => a + b, 0),
    latency: perRound(results.sse, (r) => r.latencyMs),
    total: stats(results.sse.map((r) => r.latencyMs.reduce((a, b) => a + b, 0))),
  },
  websocket: {
    bytesPerRound: results.websocket[0].bytes,
    totalBytes: results.websocket[0].bytes.reduce((a, b) => a + b, 0),
    latency: perRound(results.websocket, (r) => r.latencyMs),
    total: stats(results.websocket.map((r) => r.latencyMs.reduce((a, b) => a + b, 0))),
  },
};

if (values.json) {
  console.log(JSON.stringify(summary, null, 2));
} else {
  console.log(
    `${ROUNDS} rounds, ${RUNS} runs each, tool results of ${RESULT_BYTES} bytes, ` +
      `load ${summary.load.join(" ")}`,
  );
  console.log("| round | SSE bytes | WS bytes | SSE ms (median) | WS ms (median) |");
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (let round = 0; round < ROUNDS; round++) {
    console.log(
      `| ${round + 1} | ${summary.sse.bytesPerRound[round].toLocaleString("en")} | ` +
        `${summary.websocket.bytesPerRound[round].toLocaleString("en")} | ` +
        `${summary.sse.latency[round].median} | ${summary.websocket.latency[round].median} |`,
    );
  }
  console.log(
    `| total | ${summary.sse.totalBytes.toLocaleString("en")} | ` +
      `${summary.websocket.totalBytes.toLocaleString("en")} | ` +
      `${summary.sse.total.median} (p90 ${summary.sse.total.p90}) | ` +
      `${summary.websocket.total.median} (p90 ${summary.websocket.total.p90}) |`,
  );
}
