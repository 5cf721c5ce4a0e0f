/**
 * The errors of a person's own setup say what to fix: a refused key names the variable (or
 * header) it came from, never its value; a 404 names the URL asked, credentials hidden, and the
 * model. Real wire providers against servers on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { withRawServer } from "../support/raw_model_server.ts";
import { lastError } from "../support/stream_events.ts";

const KEY = "sk-person-SECRET-5f1e2d3c4b5a";
const TIMEOUTS = { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 };

async function errorFrom(provider: ResolvedProvider, model = "the-model") {
  const wire = createWireProvider(provider, TIMEOUTS);
  const events: StreamEvent[] = [];
  const request = { model, messages: [{ role: "user" as const, content: "hi" }], tools: [] };
  for await (const event of wire.stream(request, AbortSignal.timeout(20_000))) events.push(event);
  const error = lastError(events);
  assert.ok(!JSON.stringify(events).includes(KEY), "the key is in an event");
  assert.ok(!JSON.stringify(events).includes("SECRET"), "a secret is in an event");
  return error;
}

Deno.test("createWireProvider() names the variable of a refused key and tern doctor, in every API", async () => {
  await withScriptedServer(() => ({ fault: "http401" }), async (server) => {
    for (const api of ["openai", "openai-responses", "anthropic"] as const) {
      const error = await errorFrom({
        name: "anthropic",
        api,
        baseUrl: server.baseUrl,
        apiKey: KEY,
        keyVariable: "ANTHROPIC_API_KEY",
        keyVariables: ["TERN_API_KEY", "ANTHROPIC_API_KEY"],
        keyRequired: true,
      });
      assert.equal(error.status, 401, api);
      assert.equal(
        error.message,
        `HTTP 401 from model API: Incorrect API key provided; provider "anthropic" at ` +
          `"${server.baseUrl}" refused the key from ANTHROPIC_API_KEY: set ANTHROPIC_API_KEY ` +
          "(in the environment or .env) to a valid key for it; `tern doctor` checks the setup",
        api,
      );
    }
  });
});

Deno.test("createWireProvider() says no key was sent, and where one is looked for, on a 401", async () => {
  await withScriptedServer(() => ({ fault: "http401" }), async (server) => {
    const error = await errorFrom({
      name: "openai-compatible",
      api: "openai",
      baseUrl: server.baseUrl,
      keyVariables: ["TERN_API_KEY", "OPENAI_API_KEY"],
      keyRequired: false,
    });
    assert.match(
      error.message,
      /; no key was sent to provider "openai-compatible" at "http:\/\/127\.0\.0\.1:\d+\/v1": set TERN_API_KEY or OPENAI_API_KEY \(in the environment or \.env\); `tern doctor` checks the setup$/,
    );
  });
});

Deno.test("createWireProvider() names a credential header by name only when it is refused", async () => {
  await withScriptedServer(() => ({ fault: "http401" }), async (server) => {
    const error = await errorFrom({
      name: "gateway",
      api: "openai",
      baseUrl: server.baseUrl,
      headers: { "cf-aig-authorization": `Bearer ${KEY}` },
      keyVariables: [],
      keyRequired: false,
    });
    assert.match(
      error.message,
      /refused the credential in header "cf-aig-authorization": correct that header under "providers\.gateway\.headers" in the config/,
    );
  });
});

Deno.test("createWireProvider() on a 403 names the key's variable and the model it may lack", async () => {
  const body = { error: { message: "Project does not have access to model", code: "no_access" } };
  await withRawServer(() => Response.json(body, { status: 403 }), async (baseUrl) => {
    const error = await errorFrom({
      name: "openai",
      api: "openai",
      baseUrl,
      apiKey: KEY,
      keyVariable: "TERN_API_KEY",
      keyVariables: ["TERN_API_KEY"],
      keyRequired: true,
    }, "gpt-9");
    assert.equal(error.status, 403);
    assert.match(
      error.message,
      /^HTTP 403 from model API: Project does not have access to model; provider "openai" at "[^"]+" refused the key from TERN_API_KEY for model "gpt-9": check that it may use that model, or set TERN_API_KEY/,
    );
  });
});

Deno.test("createWireProvider() on a 404 names the URL asked, its key parameter hidden, and the model", async () => {
  await withScriptedServer([], async (server) => {
    // The scripted server has no route here: its 404 is what a wrong base URL gets.
    const baseUrl = `${new URL(server.baseUrl).origin}/wrong?api-key=${KEY}&v=2`;
    for (const api of ["openai", "anthropic"] as const) {
      const error = await errorFrom({
        name: "azure",
        api,
        baseUrl,
        apiKey: KEY,
        keyVariables: ["TERN_API_KEY"],
        keyRequired: true,
      }, "gpt-\u001b[31mx");
      const path = api === "openai" ? "/wrong/chat/completions" : "/wrong/messages";
      const origin = new URL(server.baseUrl).origin;
      assert.equal(error.status, 404);
      assert.ok(
        error.message.includes(
          `; the base URL or the model is likely wrong: tern asked "${origin}${path}?api-key=***&v=***" ` +
            'for model "gpt-\\u001b[31mx"; check the base URL (--base-url, TERN_BASE_URL or ' +
            '"baseUrl" in the config; it usually ends with the API\'s version, such as /v1) ' +
            "and the model (--model or TERN_MODEL; `tern models` " +
            "lists the models the server offers)",
        ),
        error.message,
      );
      assert.equal(server.requests.length, 0);
    }
  });
});

Deno.test("createWireProvider() adds no setup hint to a server's failure (500)", async () => {
  await withScriptedServer(() => ({ fault: "http500" }), async (server) => {
    const error = await errorFrom({
      name: "openai",
      api: "openai",
      baseUrl: server.baseUrl,
      apiKey: KEY,
      keyVariable: "TERN_API_KEY",
      keyVariables: ["TERN_API_KEY"],
      keyRequired: true,
    });
    assert.equal(
      error.message,
      "HTTP 500 from model API: The server had an error while processing your request",
    );
  });
});

Deno.test("createWireProvider() on a 404 notes a base URL without an API version", async () => {
  await withScriptedServer([], async (server) => {
    const origin = new URL(server.baseUrl).origin;
    const error = await errorFrom({
      name: "ollama",
      api: "openai",
      baseUrl: origin,
      keyVariables: ["TERN_API_KEY"],
      keyRequired: false,
    }, "qwen3");
    assert.ok(
      error.message.includes(
        `tern asked "${origin}/chat/completions" for model "qwen3"; check the base URL ` +
          '(--base-url, TERN_BASE_URL or "baseUrl" in the config; it usually ends with the ' +
          "API's version, such as /v1) and the model",
      ),
      error.message,
    );
  });
});

Deno.test("createWireProvider() clips a long model name it quotes in a hint", async () => {
  await withScriptedServer([], async (server) => {
    const error = await errorFrom({
      name: "openai",
      api: "openai",
      baseUrl: `${new URL(server.baseUrl).origin}/none/v1`,
      keyVariables: ["TERN_API_KEY"],
      keyRequired: false,
    }, "m".repeat(100_000));
    assert.ok(error.message.includes(`for model "${"m".repeat(200)}…"`), error.message);
    assert.ok(error.message.length < 1_500, `${error.message.length} characters`);
  });
});
