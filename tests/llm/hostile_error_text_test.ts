/**
 * What a hostile or broken model server can put in tern's error messages, and how long it can
 * make tern wait: escape sequences, controls and bidi characters never reach a message (a key
 * split by one is still found), a 200 that is no event stream quotes what it said instead of
 * being retried as a cut stream, and a wait asked for years ahead fails at once. (A host whose
 * name does not resolve: tests/cli/provider_errors_hints_test.ts, where tern may look it up.)
 */
import assert from "node:assert/strict";
import { isHostNotFound, transportErrorMessage } from "../../src/llm/errors.ts";
import { createRouter } from "../../src/llm/router.ts";
import { createWireProvider, type ResolvedProvider } from "../../src/llm/setup.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { withRawServer } from "../support/raw_model_server.ts";
import { lastError } from "../support/stream_events.ts";
import { info, request } from "./_router_helpers.ts";

const KEY = "sk-person-SECRET-0a1b2c3d4e5f6789";
const TIMEOUTS = { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 };
/** ESC, C1 CSI, BEL, DEL and a bidi override: none of them may reach a message. */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const ESCAPES = "\u001b]0;PWNED\u0007\u001b[2J\u009b31m\u202eevil\u007f";

function provider(baseUrl: string, api: ResolvedProvider["api"] = "openai"): ResolvedProvider {
  return {
    name: "hostile",
    api,
    baseUrl,
    apiKey: KEY,
    keyVariable: "TERN_API_KEY",
    keyVariables: ["TERN_API_KEY"],
    keyRequired: true,
  };
}

/** The events of one request through the router (4 retries, fast), and the requests served. */
async function routed(
  respond: (count: number) => Response,
  api: ResolvedProvider["api"] = "openai",
): Promise<{ events: StreamEvent[]; requests: number }> {
  let requests = 0;
  let events: StreamEvent[] = [];
  await withRawServer(() => respond(++requests), async (baseUrl) => {
    events = await routeTo(baseUrl, api);
  });
  return { events, requests };
}

async function routeTo(baseUrl: string, api: ResolvedProvider["api"] = "openai") {
  const router = createRouter({
    targets: [{
      provider: createWireProvider(provider(baseUrl, api), TIMEOUTS),
      providerName: "hostile",
      api,
      model: "m",
      info: info("m"),
    }],
    maxRetries: 4,
    retryBaseMs: 1,
  });
  const events: StreamEvent[] = [];
  for await (const event of router.stream(request("m"), AbortSignal.timeout(20_000))) {
    events.push(event);
  }
  return events;
}

function assertClean(events: StreamEvent[]): void {
  for (const event of events) {
    const text = JSON.stringify(event);
    assert.ok(!text.includes(KEY), `the key is in ${text}`);
    for (const value of Object.values(event)) {
      if (typeof value === "string") assert.doesNotMatch(value, UNSAFE, text);
    }
  }
}

Deno.test("createWireProvider() takes escapes out of an error body, and finds a key split by one", async () => {
  // The server got the key; it splits its echo with a sequence the terminal would drop.
  const split = `${KEY.slice(0, 12)}\u001b[0m${KEY.slice(12)}`;
  const bodies: Array<[number, string, Record<string, string>]> = [
    [401, JSON.stringify({ error: { message: `bad key ${split} ${ESCAPES}` } }), {}],
    [400, JSON.stringify({ error: { message: ESCAPES } }), {}],
    [403, `<html><title>${ESCAPES}</title></html>`, { "content-type": "text/html" }],
  ];
  for (const [status, body, headers] of bodies) {
    const { events } = await routed(() => new Response(body, { status, headers }));
    assertClean(events);
    const error = lastError(events);
    assert.equal(error.status, status);
    assert.match(error.message, /evil/);
    if (status === 401) assert.match(error.message, /bad key \[redacted\]/);
  }
});

Deno.test("createWireProvider() takes escapes out of an error sent inside the stream", async () => {
  const payloads = [
    `data: ${JSON.stringify({ error: { message: `stream ${ESCAPES}` } })}\n\n`,
    `data: {"choices": "\u009b31m${ESCAPES}\n\n`,
    `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 7 }, x: ESCAPES }] })}\n\n`,
    `error: ${JSON.stringify({ message: `line ${ESCAPES}` })}\n\n`,
  ];
  for (const payload of payloads) {
    const { events } = await routed(() =>
      new Response(payload, { headers: { "content-type": "text/event-stream" } })
    );
    assertClean(events);
    assert.equal(lastError(events).type, "error");
  }
});

Deno.test("createWireProvider() quotes a 200 that is no event stream, once, instead of retrying it", async () => {
  const cases: Array<[string, string | undefined, RegExp]> = [
    [
      "<!DOCTYPE html><html><body><h1>Sign in to the proxy</h1></body></html>",
      undefined,
      /^Model API sent an answer without a content type instead of an event stream: "Sign in to the proxy"$/,
    ],
    [
      "<html><body>Sign in</body></html>",
      "application/octet-stream",
      /^Model API sent "application\/octet-stream" instead of an event stream: "Sign in"$/,
    ],
    [
      `Upstream error: bad gateway ${ESCAPES}`,
      "text/plain",
      /^Model API sent "text\/plain" instead of an event stream: "Upstream error: bad gateway/,
    ],
  ];
  for (const [body, type, message] of cases) {
    const { events, requests } = await routed(() => {
      const response = new Response(body);
      if (type === undefined) response.headers.delete("content-type");
      else response.headers.set("content-type", type);
      return response;
    });
    assertClean(events);
    assert.equal(requests, 1, body);
    assert.deepEqual(events.map((event) => event.type), ["error"]);
    const error = lastError(events);
    assert.match(error.message, message);
    assert.notEqual(error.retryable, true);
  }
});

Deno.test("createWireProvider() still retries a stream that ended with only keep-alives", async () => {
  const { events, requests } = await routed(() =>
    new Response(": ping\n\nevent: ping\n\n", { headers: { "content-type": "text/plain" } })
  );
  assert.equal(requests, 5);
  assert.match(lastError(events).message, /^Model API stream ended early/);
});

Deno.test("createRouter() gives up at once when a server asks to wait until a date years ahead", async () => {
  for (const retryAfter of ["Fri, 31 Dec 9999 23:59:59 GMT", "999999", "3600"]) {
    const started = performance.now();
    const { events, requests } = await routed(() =>
      new Response("busy", { status: 503, headers: { "retry-after": retryAfter } })
    );
    assert.equal(requests, 1, retryAfter);
    assert.deepEqual(events.map((event) => event.type), ["error"]);
    const expected = retryAfter === "3600" ? "3600 s" : "more than a day";
    assert.equal(
      lastError(events).message,
      `HTTP 503 from model API: busy (the server asked to wait ${expected})`,
    );
    assert.ok(performance.now() - started < 5_000);
  }
});

Deno.test("isHostNotFound() is true for a name that does not exist, not for a lookup that could not finish", () => {
  const failure = (reason: string) =>
    new TypeError("fetch failed", {
      cause: new Error(
        "error sending request for url (http://timeout.example/v1): client error (Connect): " +
          `dns error: failed to lookup address information: ${reason}`,
      ),
    });
  assert.equal(isHostNotFound(failure("Name or service not known")), true);
  assert.equal(isHostNotFound(failure("No address associated with hostname")), true);
  assert.equal(isHostNotFound(failure("nodename nor servname provided, or not known")), true);
  assert.equal(isHostNotFound(failure("Temporary failure in name resolution")), false);
  assert.equal(isHostNotFound(new Error("connection reset by peer")), false);
  assert.match(
    transportErrorMessage(failure("Temporary failure in name resolution"), "http://a.example"),
    /: DNS lookup failed for a while \(temporary failure in name resolution\): check your network$/,
  );
});

Deno.test("createWireProvider() keeps a server's stop word without escapes, clipped", async () => {
  const word = `filtered${ESCAPES}${"x".repeat(100_000)}`;
  const chunk = { choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: word }] };
  const { events } = await routed(() =>
    new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`, {
      headers: { "content-type": "text/event-stream" },
    })
  );
  assertClean(events);
  const done = events.at(-1);
  assert.equal(done?.type, "done");
  if (done?.type !== "done") return;
  assert.equal(done.finishReason, "other");
  assert.match(done.stopReason ?? "", /^filteredevilx+…$/);
  assert.ok((done.stopReason ?? "").length <= 101);
});

Deno.test("a base URL on a port fetch never connects to fails at once, saying so", async () => {
  // Port 9 is one of the Fetch standard's bad ports: refused before any connection is tried.
  const events = await routeTo("http://127.0.0.1:9/v1");
  const error = lastError(events);
  assert.match(error.message, /its port is one fetch never connects to.*another port/);
  assert.equal(events.filter((event) => event.type === "retry").length, 0, "it was retried");
});
