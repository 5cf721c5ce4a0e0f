/** A model server on 127.0.0.1 that answers every request with bytes a test chooses. */
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

/**
 * Runs `body` against a server whose every answer is `respond(closing)`, at
 * `http://127.0.0.1:<port>/v1`; `closing` fires as the server shuts down, so a body that
 * streams forever can end.
 */
export async function withRawServer(
  respond: (closing: AbortSignal) => Response | Promise<Response>,
  body: (baseUrl: string) => Promise<void>,
): Promise<void> {
  const closing = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      await request.body?.cancel();
      return await respond(closing.signal);
    },
  );
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`);
  } finally {
    closing.abort();
    await server.shutdown();
  }
}

/**
 * The events of one request to `baseUrl` through the real wire provider of `api`, with the
 * given timeouts; `guardMs` ends it if they fail to.
 */
export async function streamFrom(
  api: ResolvedProvider["api"],
  baseUrl: string,
  timeouts: { requestTimeoutMs: number; idleTimeoutMs: number },
  guardMs: number,
): Promise<StreamEvent[]> {
  const provider: ResolvedProvider = {
    name: api,
    api,
    baseUrl,
    apiKey: "sk-test-0123456789",
    keyVariables: ["TERN_API_KEY"],
    keyRequired: true,
  };
  const wire = createWireProvider(provider, timeouts);
  const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [] };
  const events: StreamEvent[] = [];
  for await (const event of wire.stream(request, AbortSignal.timeout(guardMs))) {
    events.push(event);
  }
  return events;
}
