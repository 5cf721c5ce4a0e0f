/**
 * A lone surrogate anywhere in what tern sends (half of an emoji a cut left in a tool's output, a
 * model's own tool input) never reaches a model API: the servers refuse the request ("no low
 * surrogate in string"), and the session would send it again with every later request.
 */
import { equal, ok } from "node:assert/strict";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { ModelRequest } from "../../src/llm/types.ts";

const HALF = "\uD83D";
const LOW = "\uDE00";

for (const api of ["openai", "openai-responses", "anthropic"] as const) {
  Deno.test(`the ${api} request carries no lone surrogate, and keeps whole emoji and backslashes`, async () => {
    let sent = "";
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        sent = await request.text();
        return new Response(JSON.stringify({ error: { message: "enough" } }), { status: 400 });
      },
    );
    try {
      const provider: ResolvedProvider = {
        name: api,
        api,
        baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
        apiKey: "sk-test-0123456789",
        keyVariables: ["TERN_API_KEY"],
        keyRequired: true,
      };
      const wire = createWireProvider(provider, {
        requestTimeoutMs: 10_000,
        idleTimeoutMs: 10_000,
      });
      const request: ModelRequest = {
        model: "m",
        tools: [],
        messages: [
          { role: "user", content: `fix it 😀 and the text \\ud83d stays ${LOW}` },
          {
            role: "assistant",
            content: "",
            // The model's JSON may spell a half as an escape: parsed, it is a lone surrogate.
            toolCalls: [{ id: "c1", name: "grep", arguments: `{"k\\ud83d": "v\\ud83d"}` }],
          },
          { role: "tool", toolCallId: "c1", name: "grep", content: `output cut in ${HALF}` },
        ],
      };
      for await (const _ of wire.stream(request, AbortSignal.timeout(10_000))) {
        // The answer is an error; the request is what is checked.
      }
      ok(sent.length > 0, "nothing was sent");
      ok(!/(?<!\\)\\ud[89a-f]/i.test(sent), sent);
      const body = JSON.stringify(JSON.parse(sent));
      ok(body.includes("fix it 😀"), body);
      ok(body.includes("the text \\\\ud83d stays"), body);
      ok(body.includes("output cut in \uFFFD"), body);
      equal((body.match(/\uFFFD/g) ?? []).length >= 2, true, body);
    } finally {
      await server.shutdown();
    }
  });
}
