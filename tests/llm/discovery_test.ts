import assert from "node:assert/strict";
import { discoverModels } from "../../src/llm/discovery.ts";
import { type ApiStyle, guessedModel, unknownModel } from "../../src/llm/model_info.ts";

const KEY = "sk-live-SECRET-0123456789abcdef";

type Handler = (request: Request) => Response | Promise<Response>;

/** What a test needs of a request after it was answered (the Request itself is closed then). */
interface Seen {
  method: string;
  url: URL;
  headers: Headers;
}

function record(request: Request): Seen {
  return {
    method: request.method,
    url: new URL(request.url),
    headers: new Headers(request.headers),
  };
}

/** Runs `body` against a server on 127.0.0.1 answering with `handler`; closes it after. */
async function withServer(
  handler: Handler,
  body: (baseUrl: string, origin: string) => Promise<void>,
): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  try {
    await body(`${origin}/v1/`, origin);
  } finally {
    await server.shutdown();
  }
}

function json(value: unknown, status = 200): Response {
  return Response.json(value, { status });
}

function discovered(provider: string, id: string) {
  return { provider, ...unknownModel(id), source: "discovered" as const };
}

/** What discovery makes of a model the server gives no context window for. */
function guessed(provider: string, id: string, api: ApiStyle = "openai") {
  return { provider, ...guessedModel(id, api) };
}

Deno.test("discoverModels() reads an OpenAI-style list", async () => {
  const seen: Seen[] = [];
  const handler = (request: Request) => {
    seen.push(record(request));
    return json({
      object: "list",
      data: [
        { id: "gpt-5", object: "model", owned_by: "openai" },
        { id: "gpt-4o", object: "model" },
        { id: "gpt-5", object: "model" },
        { id: 42 },
        "junk",
      ],
    });
  };
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({
      provider: "openai",
      api: "openai",
      baseUrl,
      apiKey: KEY,
    });
    assert.deepEqual(models, [guessed("openai", "gpt-5"), guessed("openai", "gpt-4o")]);
  });
  assert.equal(seen[0].url.pathname, "/v1/models");
  assert.equal(seen[0].method, "GET");
  assert.equal(seen[0].headers.get("authorization"), `Bearer ${KEY}`);
});

Deno.test("discoverModels() sends no authorization without a key", async () => {
  let authorization: string | null = "unset";
  const handler = (request: Request) => {
    authorization = request.headers.get("authorization");
    return json({ data: [{ id: "qwen3-coder:30b", object: "model", owned_by: "library" }] });
  };
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({
      provider: "ollama",
      api: "openai",
      baseUrl,
      headers: { "x-extra": "1" },
    });
    assert.deepEqual(models, [guessed("ollama", "qwen3-coder:30b")]);
  });
  assert.equal(authorization, null);
});

Deno.test("discoverModels() reads OpenRouter limits, prices and parameters", async () => {
  const handler = () =>
    json({
      data: [
        {
          id: "anthropic/claude-sonnet-4.5",
          context_length: 1_000_000,
          architecture: { input_modalities: ["text", "image"] },
          pricing: {
            prompt: "0.000003",
            completion: "0.000015",
            input_cache_read: "0.0000003",
            input_cache_write: "0.00000375",
          },
          top_provider: { context_length: 1_000_000, max_completion_tokens: 64_000 },
          supported_parameters: ["max_tokens", "reasoning", "tools", "tool_choice"],
        },
        {
          id: "openrouter/auto",
          context_length: 2_000_000,
          pricing: { prompt: "-1", completion: "-1" },
          top_provider: { max_completion_tokens: null },
          supported_parameters: ["max_tokens"],
        },
        { id: "free/model", pricing: { prompt: "0", completion: "0" } },
      ],
    });
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({ provider: "openrouter", api: "openai", baseUrl });
    assert.deepEqual(models, [
      {
        ...discovered("openrouter", "anthropic/claude-sonnet-4.5"),
        contextWindow: 1_000_000,
        maxOutputTokens: 64_000,
        reasoning: "effort",
        images: true,
        tools: true,
        price: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
      },
      { ...discovered("openrouter", "openrouter/auto"), contextWindow: 2_000_000, tools: false },
      { ...guessed("openrouter", "free/model"), price: { input: 0, output: 0 } },
    ]);
  });
});

Deno.test("discoverModels() leaves out a price that is not finite or past the maximum per million tokens", async () => {
  const handler = () =>
    json({
      data: [
        { id: "huge", pricing: { prompt: "1e300", completion: "0.000015" } },
        { id: "overflow", pricing: { prompt: "0.000003", completion: 1e300 } },
        { id: "dear", pricing: { prompt: "0.02", completion: "0.000015" } },
        {
          id: "cache",
          pricing: {
            prompt: "0.000003",
            completion: "0.000015",
            input_cache_read: "1e308",
            input_cache_write: "Infinity",
          },
        },
        { id: "top", pricing: { prompt: "0.01", completion: "0.01" } },
      ],
    });
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({ provider: "openrouter", api: "openai", baseUrl });
    assert.deepEqual(models, [
      guessed("openrouter", "huge"),
      guessed("openrouter", "overflow"),
      guessed("openrouter", "dear"),
      { ...guessed("openrouter", "cache"), price: { input: 3, output: 15 } },
      { ...guessed("openrouter", "top"), price: { input: 10_000, output: 10_000 } },
    ]);
    // What the models cache stores: no price turns into null.
    assert.equal(JSON.stringify(models).includes("null"), false);
  });
});

Deno.test("discoverModels() reads vLLM's max_model_len", async () => {
  const handler = () =>
    json({
      object: "list",
      data: [
        { id: "Qwen/Qwen3-Coder-30B-A3B-Instruct", object: "model", max_model_len: 65_536 },
        { id: "small", object: "model", max_model_len: 4_096 },
      ],
    });
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({ provider: "vllm", api: "openai", baseUrl });
    assert.deepEqual(models, [
      { ...discovered("vllm", "Qwen/Qwen3-Coder-30B-A3B-Instruct"), contextWindow: 65_536 },
      { ...discovered("vllm", "small"), contextWindow: 4_096, maxOutputTokens: 4_096 },
    ]);
  });
});

Deno.test("discoverModels() sends Anthropic's headers", async () => {
  let seen: Seen | undefined;
  const handler = (request: Request) => {
    seen = record(request);
    return json({
      data: [{
        id: "claude-sonnet-4-5-20250929",
        type: "model",
        display_name: "Claude Sonnet 4.5",
        created_at: "2025-09-29T00:00:00Z",
      }],
      has_more: false,
      first_id: "claude-sonnet-4-5-20250929",
      last_id: "claude-sonnet-4-5-20250929",
    });
  };
  await withServer(handler, async (baseUrl) => {
    const models = await discoverModels({
      provider: "anthropic",
      api: "anthropic",
      baseUrl,
      apiKey: KEY,
    });
    assert.deepEqual(models, [
      // Claude models all take 200k tokens and images: the guess says so.
      {
        ...guessed("anthropic", "claude-sonnet-4-5-20250929", "anthropic"),
        contextWindow: 200_000,
      },
    ]);
    assert.equal(models[0].images, true);
  });
  assert.ok(seen);
  assert.equal(seen.url.pathname, "/v1/models");
  assert.equal(seen.url.searchParams.get("limit"), "1000");
  assert.equal(seen.headers.get("x-api-key"), KEY);
  assert.equal(seen.headers.get("anthropic-version"), "2023-06-01");
  assert.equal(seen.headers.get("authorization"), null);
});

Deno.test("discoverModels() reports HTTP errors without the key", async () => {
  const handler = () =>
    json({ error: { message: `Incorrect API key provided: ${KEY}`, type: "auth" } }, 401);
  await withServer(handler, async (baseUrl, origin) => {
    await assert.rejects(
      discoverModels({ provider: "openai", api: "openai", baseUrl, apiKey: KEY }),
      {
        name: "Error",
        message: `Cannot list models at "${origin}": HTTP 401: Incorrect API key provided: ` +
          "[redacted]",
      },
    );
  });
});

Deno.test("discoverModels() names the status when the error body is empty", async () => {
  await withServer(() => new Response(null, { status: 503 }), async (baseUrl, origin) => {
    await assert.rejects(discoverModels({ provider: "vllm", api: "openai", baseUrl }), {
      message: `Cannot list models at "${origin}": HTTP 503: Service Unavailable`,
    });
  });
});

Deno.test("discoverModels() rejects answers that are not a model list", async () => {
  const answers = [
    ["<html>hello</html>", "unexpected response (not JSON)"],
    [JSON.stringify({ models: [] }), 'unexpected response (no "data" list)'],
    [JSON.stringify([{ id: "a" }]), 'unexpected response (no "data" list)'],
    [JSON.stringify({ data: { id: "a" } }), 'unexpected response (no "data" list)'],
  ];
  for (const [body, reason] of answers) {
    await withServer(() => new Response(body), async (baseUrl, origin) => {
      await assert.rejects(discoverModels({ provider: "vllm", api: "openai", baseUrl }), {
        message: `Cannot list models at "${origin}": ${reason}`,
      });
    });
  }
});

Deno.test("discoverModels() reports a refused connection", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  await assert.rejects(
    discoverModels({ provider: "ollama", api: "openai", baseUrl: `http://127.0.0.1:${port}/v1` }),
    { message: `Cannot list models at "http://127.0.0.1:${port}": connection refused` },
  );
});

/** A server that accepts the request and answers only once the test is over. */
async function withHangingServer(
  body: (baseUrl: string, origin: string, arrived: Promise<void>) => Promise<void>,
): Promise<void> {
  const release = Promise.withResolvers<void>();
  const arrived = Promise.withResolvers<void>();
  const handler = async () => {
    arrived.resolve();
    await release.promise;
    return json({ data: [] });
  };
  await withServer(handler, async (baseUrl, origin) => {
    try {
      await body(baseUrl, origin, arrived.promise);
    } finally {
      release.resolve();
    }
  });
}

Deno.test("discoverModels() gives up after the timeout", async () => {
  await withHangingServer(async (baseUrl, origin) => {
    await assert.rejects(
      discoverModels({ provider: "vllm", api: "openai", baseUrl, timeoutMs: 100 }),
      { message: `Cannot list models at "${origin}": timed out after 100 ms` },
    );
  });
});

Deno.test("discoverModels() stops when the signal fires", async () => {
  await withHangingServer(async (baseUrl, origin, arrived) => {
    const controller = new AbortController();
    const listing = discoverModels({
      provider: "vllm",
      api: "openai",
      baseUrl,
      signal: controller.signal,
    });
    await arrived;
    controller.abort();
    await assert.rejects(listing, { message: `Cannot list models at "${origin}": aborted` });
  });
});

Deno.test("discoverModels() rejects an invalid base URL", async () => {
  await assert.rejects(discoverModels({ provider: "x", api: "openai", baseUrl: "not a url" }), {
    name: "TypeError",
    message: 'Cannot list models at "not a url": invalid URL',
  });
});

Deno.test("discoverModels() never follows a redirect with the key to another server", async () => {
  const seen: Seen[] = [];
  await withServer((request) => {
    seen.push(record(request));
    return json({ data: [{ id: "m" }] });
  }, async (_otherBase, other) => {
    await withServer(
      (request) =>
        new Response(null, {
          status: 307,
          headers: { location: `${other}${new URL(request.url).pathname}` },
        }),
      async (baseUrl, origin) => {
        for (const api of ["openai", "anthropic"] as const) {
          await assert.rejects(
            discoverModels({ provider: "p", api, baseUrl, apiKey: KEY }),
            (error: Error) => {
              assert.equal(
                error.message.split(": tern")[0],
                `Cannot list models at "${origin}": redirected (307) to "${other}"`,
              );
              assert.ok(!error.message.includes(KEY));
              return true;
            },
          );
        }
      },
    );
  });
  assert.deepEqual(seen, []);
});
