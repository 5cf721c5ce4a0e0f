import assert from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { DEFAULTS, type TernConfig } from "../../src/config/mod.ts";
import { TernError } from "../../src/core/errors.ts";
import { type ModelConfig, setupModels } from "../../src/llm/setup.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

const NONE = { model: false, baseUrl: false };

function config(overrides: Partial<TernConfig> = {}): ModelConfig {
  return {
    model: DEFAULTS.model,
    baseUrl: DEFAULTS.baseUrl,
    requestTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
    maxRetries: 0,
    retryBaseMs: 1,
    fallback: [],
    providers: {},
    models: {},
    apiKeys: {},
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("setupModels() without a provider talks Chat Completions at baseUrl with the generic key", () => {
  const { primary } = setupModels(
    config({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "k-generic" }),
    { model: false, baseUrl: true },
  );
  assert.equal(primary.providerName, "openai-compatible");
  assert.equal(primary.api, "openai");
  assert.equal(primary.model, DEFAULTS.model);
});

Deno.test("setupModels() picks the catalog's provider for a bare catalog model", () => {
  const { primary } = setupModels(
    config({ model: "claude-sonnet-4-5", apiKeys: { ANTHROPIC_API_KEY: "k-ant" } }),
    { model: true, baseUrl: false },
  );
  assert.equal(primary.providerName, "anthropic");
  assert.equal(primary.api, "anthropic");
  assert.equal(primary.info.reasoning, "budget");
  assert.ok(primary.info.contextWindow >= 200_000);
});

Deno.test("setupModels() uses a preset's default model when none was given", () => {
  const { primary } = setupModels(config({ provider: "ollama" }), NONE);
  assert.equal(primary.providerName, "ollama");
  assert.equal(primary.model, "qwen3-coder");
});

Deno.test("setupModels() refuses an unknown provider, a missing key and a bad fallback with exit code 2", () => {
  const refused = (value: ModelConfig, pattern: RegExp) =>
    assert.throws(() => setupModels(value, NONE), (error: unknown) => {
      assert.ok(error instanceof TernError);
      assert.equal(exitCodeForError(error), 2);
      assert.match(error.message, pattern);
      return true;
    });
  refused(config({ provider: "nope" }), /Unknown provider "nope": use one from .*"anthropic"/);
  // An object's own properties are no providers (a project config naming "constructor" got a
  // misleading "needs api" error).
  for (const name of ["constructor", "toString", "hasOwnProperty"]) {
    refused(config({ provider: name }), new RegExp(`Unknown provider "${name}"`));
  }
  refused(
    config({ provider: "anthropic" }),
    /No API key for provider "anthropic".*ANTHROPIC_API_KEY/,
  );
  refused(
    config({ provider: "ollama", fallback: ["nope/x"] }),
    /Cannot use fallback "nope\/x": unknown provider "nope"/,
  );
  refused(
    config({ provider: "mine", providers: { mine: { baseUrl: "http://127.0.0.1:9/v1" } } }),
    /provider "mine" from config: it needs "api"/,
  );
  refused(
    config({ provider: "ollama", models: { "qwen3-coder": { contextWindow: -1 } } }),
    /Invalid "models" in config/,
  );
});

Deno.test("setupModels() sends each key only to its own provider", async () => {
  await withScriptedServer([{ text: "one" }, { text: "two" }], async (server) => {
    const keys = { TERN_API_KEY: "k-tern", OPENAI_API_KEY: "k-openai", ANTHROPIC_API_KEY: "k-ant" };
    // The main provider gets TERN_API_KEY; a fallback gets only its own variable.
    const main = setupModels(
      config({ provider: "anthropic", baseUrl: server.baseUrl, apiKeys: keys, model: "claude-x" }),
      { model: true, baseUrl: true },
    );
    await collect(main.router.stream({ model: "claude-x", messages: [], tools: [] }));
    assert.equal(server.requests[0].headers["x-api-key"], "k-tern");
    assert.equal(server.requests[0].headers["authorization"], undefined);

    const own = setupModels(
      config({
        provider: "anthropic",
        baseUrl: server.baseUrl,
        apiKeys: { OPENAI_API_KEY: "k-openai" },
        model: "claude-x",
      }),
      { model: true, baseUrl: true },
    );
    await collect(own.router.stream({ model: "claude-x", messages: [], tools: [] }));
    assert.equal(server.requests[1].headers["x-api-key"], undefined, "no OpenAI key to Anthropic");
  });
});

Deno.test("setupModels() builds a fallback chain from config providers and presets", () => {
  const { router } = setupModels(
    config({
      provider: "ollama",
      fallback: ["backup/big-model", "ollama/other", "plain-model"],
      providers: { backup: { api: "openai-responses", baseUrl: "http://127.0.0.1:9/v1" } },
    }),
    NONE,
  );
  assert.equal(router.current.providerName, "ollama");
  // The chain is internal; its labels show in the fallback events the router tests cover.
  assert.equal(router.name, "ollama");
});

Deno.test("setupModels() applies config model overrides, also provider-qualified ones", () => {
  const { primary } = setupModels(
    config({
      provider: "mine",
      model: "house-model",
      providers: { mine: { api: "openai", baseUrl: "http://127.0.0.1:9/v1" } },
      models: {
        "mine/house-model": { contextWindow: 64_000, price: { input: 1, output: 2 } },
      },
    }),
    { model: true, baseUrl: false },
  );
  assert.equal(primary.info.contextWindow, 64_000);
  assert.deepEqual(primary.info.price, { input: 1, output: 2 });
  assert.equal(primary.info.source, "config");
});

Deno.test("setupModels() gives a config provider's transport to the Responses API, and router.close() closes its socket", async () => {
  await withScriptedServer([{ text: "one" }], async (server) => {
    const { router } = setupModels(
      config({
        provider: "mine",
        model: "gpt-test",
        providers: {
          mine: { api: "openai-responses", baseUrl: server.baseUrl, transport: "websocket" },
        },
      }),
      { model: true, baseUrl: false },
    );
    const request = { model: "gpt-test", messages: [], tools: [], cacheKey: "k" };
    const events = await collect(router.stream(request));
    assert.equal(events.at(-1)?.type, "done");
    // The first request goes over HTTP while the socket opens beside it.
    for (let i = 0; i < 2_000 && server.sockets.open === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(server.sockets.open, 1);
    await router.close?.();
    for (let i = 0; i < 2_000 && server.sockets.open > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(server.sockets.open, 0);
  });
});
