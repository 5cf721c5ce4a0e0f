/**
 * The reference agent (bench/reference_agent.ts), the floor of the bash benchmark, really runs
 * its bash calls and loops until an answer without tool calls.
 */
import { equal, match } from "node:assert/strict";
import { runAgent, sseData } from "../../bench/reference_agent.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

Deno.test("runAgent() runs each bash call and sends its output back until the answer", async () => {
  const script = [
    { toolCalls: [{ id: "a", name: "bash", arguments: '{"command":"echo one; exit 3"}' }] },
    { toolCalls: [{ id: "b", name: "bash", arguments: '{"command":"echo $((6 * 7))"}' }] },
    { text: "all done" },
  ];
  await withScriptedServer(script, async (server) => {
    equal(await runAgent(server.baseUrl, "m", "count"), "all done");
    equal(server.requests.length, 3);
    const results = server.requests.slice(1).map((r) => r.modelRequest.messages.at(-1));
    equal(results[0]?.role, "tool");
    match(results[0]!.content, /^one\n\n\[exit code 3\]$/);
    match(results[1]!.content, /^42\n/);
    equal(server.requests[2].modelRequest.messages.length, 6, "system, user, 2 × (call, result)");
  });
});

Deno.test("sseData() yields the data of each event across chunk boundaries", async () => {
  const text = 'data: {"a":1}\n\n: comment\n\ndata: [DONE]\n\n';
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.subarray(i, i + 5));
      controller.close();
    },
  });
  const seen: string[] = [];
  for await (const data of sseData(body)) seen.push(data);
  equal(JSON.stringify(seen), JSON.stringify(['{"a":1}', "[DONE]"]));
});
