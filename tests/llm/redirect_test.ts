/**
 * Provider requests carry the person's key: a server answering with a redirect to another
 * server must not get tern to send the key there, in any wire API.
 */
import assert from "node:assert/strict";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

const KEY = "sk-person-SECRET-90ab12cd34";

Deno.test("createWireProvider() never follows a redirect with the key, in any API", async () => {
  await withScriptedServer([{ text: "never" }], async (target) => {
    const targetOrigin = new URL(target.baseUrl).origin;
    for (const status of [301, 302, 303, 307, 308]) {
      const redirector = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        (request) =>
          new Response(null, {
            status,
            headers: { location: `${targetOrigin}${new URL(request.url).pathname}` },
          }),
      );
      try {
        for (const api of ["openai", "openai-responses", "anthropic"] as const) {
          const provider: ResolvedProvider = {
            name: api,
            api,
            baseUrl: `http://127.0.0.1:${redirector.addr.port}/v1`,
            apiKey: KEY,
            keyVariables: ["TERN_API_KEY"],
            keyRequired: true,
          };
          const wire = createWireProvider(provider, {
            requestTimeoutMs: 5000,
            idleTimeoutMs: 5000,
          });
          const events: StreamEvent[] = [];
          for await (
            const event of wire.stream({
              model: "m",
              messages: [{ role: "user", content: "hi" }],
              tools: [],
            })
          ) events.push(event);
          const last = events.at(-1);
          assert.equal(last?.type, "error", `${api} ${status}`);
          if (last?.type !== "error") continue;
          assert.match(
            last.message,
            new RegExp(`redirected \\(${status}\\) to "${targetOrigin}": tern does not follow`),
          );
          assert.notEqual(last.retryable, true);
          assert.ok(!last.message.includes(KEY));
        }
      } finally {
        await redirector.shutdown();
      }
    }
    assert.deepEqual(target.requests, []);
  });
});
