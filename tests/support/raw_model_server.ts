/** A model server on 127.0.0.1 that answers every request with bytes a test chooses. */

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
