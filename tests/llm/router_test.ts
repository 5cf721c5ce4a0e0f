import assert from "node:assert/strict";
import { runTurn } from "../../src/agent/loop.ts";
import { ABORTED_MESSAGE, STREAM_ENDED_EARLY_MESSAGE } from "../../src/llm/errors.ts";
import type { ApiStyle } from "../../src/llm/model_info.ts";
import { createRouter } from "../../src/llm/router.ts";
import { ScriptedProvider, type ScriptedReply } from "../../src/llm/scripted.ts";
import type { StreamEvent } from "../../src/llm/types.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import {
  collect,
  last,
  ofType,
  request,
  target,
  textOf,
  wireTarget,
  withServers,
} from "./_router_helpers.ts";

const FAST = { retryBaseMs: 2, random: () => 0 };
const HTTP500: ScriptedReply = { fault: "http500" };

Deno.test("createRouter() waits the 429's Retry-After, then answers", async () => {
  await withServers(
    [[{ fault: "http429", retryAfter: "1" }, { text: "Hi there" }]],
    async ([s]) => {
      const router = createRouter({ targets: [wireTarget(s, "main", "m1")], ...FAST });
      const events = await collect(router.stream(request("m1")));
      const retries = ofType(events, "retry");
      assert.equal(retries.length, 1);
      assert.equal(retries[0].attempt, 1);
      assert.equal(retries[0].delayMs, 1000);
      assert.match(retries[0].reason, /HTTP 429/);
      assert.equal(textOf(events), "Hi there");
      const done = last(events, "done");
      assert.equal(done.provider, "main");
      assert.equal(done.model, "m1");
      assert.equal(s.requests.length, 2);
    },
  );
});

Deno.test("createRouter() waits the backoff when Retry-After asks for less", async () => {
  await withServers(
    [[{ fault: "http429", retryAfter: "1" }, { text: "too soon" }]],
    async ([s]) => {
      const router = createRouter({
        targets: [wireTarget(s, "main", "m1")],
        retryBaseMs: 60_000,
        random: () => 0,
      });
      const controller = new AbortController();
      const events: StreamEvent[] = [];
      for await (const event of router.stream(request("m1"), controller.signal)) {
        events.push(event);
        // The delay is what is under test: stop instead of sleeping it.
        if (event.type === "retry") controller.abort();
      }
      const [retry] = ofType(events, "retry");
      // The server asked for 1 s; the backoff (half of the first 60 s step) is longer and wins.
      assert.equal(retry.delayMs, 30_000, JSON.stringify(events));
      assert.match(retry.reason, /HTTP 429/);
      assert.equal(s.requests.length, 1);
    },
  );
});

for (const api of ["openai", "anthropic", "openai-responses"] as ApiStyle[]) {
  Deno.test(`createRouter() retries a 500 once and then answers (${api})`, async () => {
    await withServers([[HTTP500, { text: "Recovered" }]], async ([s]) => {
      const router = createRouter({ targets: [wireTarget(s, "main", "m1", { api })], ...FAST });
      const events = await collect(router.stream(request("m1")));
      const retries = ofType(events, "retry");
      assert.equal(retries.length, 1, JSON.stringify(events));
      // Backoff with random 0: half of the first 2 ms step.
      assert.deepEqual({ attempt: retries[0].attempt, delayMs: retries[0].delayMs }, {
        attempt: 1,
        delayMs: 1,
      });
      assert.match(retries[0].reason, /HTTP 500/);
      assert.equal(textOf(events), "Recovered");
      assert.equal(last(events, "done").message.content, "Recovered");
      assert.equal(s.requests.length, 2);
    });
  });
}

Deno.test("createRouter() falls back after repeated 500s and stays on the fallback", async () => {
  const always500 = () => HTTP500;
  await withServers([always500, [{ text: "From backup" }, { text: "Again" }]], async (servers) => {
    const [first, second] = servers;
    const router = createRouter({
      targets: [wireTarget(first, "main", "m1"), wireTarget(second, "backup", "b1")],
      maxRetries: 2,
      ...FAST,
    });
    const events = await collect(router.stream(request("m1")));
    assert.equal(first.requests.length, 3);
    assert.equal(ofType(events, "retry").length, 2);
    const fallbacks = ofType(events, "fallback");
    assert.equal(fallbacks.length, 1);
    const { reason, ...rest } = fallbacks[0];
    assert.deepEqual(rest, {
      type: "fallback",
      from: "main/m1",
      to: "backup/b1",
      provider: "backup",
      model: "b1",
    });
    assert.match(reason, /HTTP 500/);
    assert.match(reason, /gave up after 3 attempts/);
    assert.ok(events.indexOf(fallbacks[0]) < events.findIndex((e) => e.type === "text_delta"));
    assert.equal(textOf(events), "From backup");
    const done = last(events, "done");
    assert.deepEqual([done.provider, done.model], ["backup", "b1"]);
    assert.equal(second.requests[0].body.model, "b1");

    const again = await collect(router.stream(request("m1")));
    assert.equal(first.requests.length, 3, "the failed target was asked again");
    assert.equal(second.requests.length, 2);
    assert.equal(ofType(again, "fallback").length, 0);
    assert.equal(last(again, "done").provider, "backup");
    assert.equal(textOf(again), "Again");
  });
});

Deno.test("createRouter() current names the target the next request starts with", async () => {
  const main = new ScriptedProvider(() => HTTP500, { name: "main" });
  const backup = new ScriptedProvider([{ text: "one" }, { text: "two" }], { name: "backup" });
  const targets = [target(main, "main", "m1"), target(backup, "backup", "b1")];
  const router = createRouter({ targets, maxRetries: 0, ...FAST });
  assert.equal(router.current, targets[0]);
  assert.equal(router.name, "main");
  last(await collect(router.stream(request("m1"))), "done");
  assert.equal(router.current, targets[1]);
  assert.equal(router.name, "backup");
  last(await collect(router.stream(request("m1"))), "done");
  assert.equal(router.current, targets[1]);
  assert.equal(main.requests.length, 1);
  assert.equal(backup.requests.length, 2);
});

Deno.test("createRouter() ends with a plain error once every target gave up", async () => {
  const main = new ScriptedProvider(() => HTTP500);
  const backup = new ScriptedProvider(() => HTTP500);
  const router = createRouter({
    targets: [target(main, "main", "m1"), target(backup, "backup", "b1")],
    maxRetries: 1,
    ...FAST,
  });
  const events = await collect(router.stream(request("m1")));
  assert.equal(ofType(events, "fallback").length, 1);
  assert.equal(ofType(events, "retry").length, 2);
  const error = last(events, "error");
  assert.equal(error.kind, "client");
  assert.equal(error.status, 500);
  assert.notEqual(error.retryable, true);
  assert.match(error.message, /HTTP 500/);
  assert.match(error.message, /gave up after 2 attempts/);
  assert.equal(ofType(events, "error").length, 1);
  assert.deepEqual([main.requests.length, backup.requests.length], [2, 2]);
  assert.equal(router.current.providerName, "main", "a failed request moved the start");
});

Deno.test("createRouter() does not retry a stream cut in the middle of a tool call", async () => {
  const cut: ScriptedReply = {
    text: "Let me read it.",
    toolCalls: [{ name: "read_file", arguments: '{"path":"src/main.ts"}' }],
    fault: "drop_mid_stream",
  };
  await withServers([[cut, { text: "never" }]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "main", "m1")], ...FAST });
    const events = await collect(router.stream(request("m1")));
    assert.equal(s.requests.length, 1);
    assert.equal(ofType(events, "retry").length, 0);
    const error = last(events, "error");
    assert.notEqual(error.retryable, true);
    assert.match(error.message, /cut off/);
    assert.match(error.message, /not retried/);
    const callAt = events.findIndex((event) => event.type === "tool_call_delta");
    assert.ok(callAt >= 0 && callAt < events.length - 1, JSON.stringify(events));
  });
});

Deno.test("createRouter() retries a stream cut in the middle of text", async () => {
  const cut: ScriptedReply = { text: "A long answer that breaks off", fault: "drop_mid_stream" };
  await withServers([[cut, { text: "Whole answer" }]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "main", "m1")], ...FAST });
    const events = await collect(router.stream(request("m1")));
    const retries = ofType(events, "retry");
    assert.equal(retries.length, 1);
    assert.equal(retries[0].reason, STREAM_ENDED_EARLY_MESSAGE);
    assert.ok(events.findIndex((e) => e.type === "text_delta") < events.indexOf(retries[0]));
    assert.equal(last(events, "done").message.content, "Whole answer");
    assert.equal(s.requests.length, 2);
  });
});

Deno.test("createRouter() neither retries nor falls back on a 401, and leaks no key", async () => {
  const key = "sk-test-SECRET-1234";
  await withServers([[{ fault: "http401" }], [{ text: "never" }]], async ([first, second]) => {
    const router = createRouter({
      targets: [
        wireTarget(first, "main", "m1", { apiKey: key }),
        wireTarget(second, "backup", "b1", { apiKey: key }),
      ],
      ...FAST,
    });
    const events = await collect(router.stream(request("m1")));
    assert.deepEqual(events.map((event) => event.type), ["error"]);
    const error = last(events, "error");
    assert.equal(error.status, 401);
    assert.match(error.message, /HTTP 401/);
    assert.equal(first.requests[0].headers.authorization, `Bearer ${key}`);
    assert.deepEqual([first.requests.length, second.requests.length], [1, 0]);
    assert.ok(!JSON.stringify(events).includes(key));
    assert.ok(!JSON.stringify(events).includes("SECRET"));
  });
});

Deno.test("createRouter() falls back at once when Retry-After exceeds the longest wait", async () => {
  await withServers([[{ fault: "http429", retryAfter: "120" }]], async ([s]) => {
    const backup = new ScriptedProvider([{ text: "Backup answer" }]);
    const router = createRouter({
      targets: [wireTarget(s, "main", "m1"), target(backup, "backup", "b1")],
      maxRetryDelayMs: 5_000,
      ...FAST,
    });
    const events = await collect(router.stream(request("m1")));
    assert.equal(ofType(events, "retry").length, 0);
    assert.equal(s.requests.length, 1);
    const [fallback] = ofType(events, "fallback");
    assert.match(fallback.reason, /HTTP 429/);
    assert.match(fallback.reason, /wait 120 s/);
    assert.equal(last(events, "done").message.content, "Backup answer");
  });
});

Deno.test("createRouter() fails at once when Retry-After exceeds the longest wait", async () => {
  const main = new ScriptedProvider([{ fault: "http429", retryAfter: "90" }, { text: "no" }]);
  const router = createRouter({
    targets: [target(main, "main", "m1")],
    maxRetryDelayMs: 60_000,
    ...FAST,
  });
  const events = await collect(router.stream(request("m1")));
  assert.deepEqual(events.map((event) => event.type), ["error"]);
  const error = last(events, "error");
  assert.equal(error.status, 429);
  assert.match(error.message, /asked to wait 90 s/);
  assert.equal(main.requests.length, 1);
});

Deno.test("createRouter() ends the backoff sleep when the signal fires", async () => {
  const main = new ScriptedProvider([HTTP500, { text: "too late" }]);
  const router = createRouter({
    targets: [target(main, "main", "m1")],
    retryBaseMs: 60_000,
    random: () => 0,
  });
  const controller = new AbortController();
  const stream = router.stream(request("m1"), controller.signal)[Symbol.asyncIterator]();
  const retry = await stream.next();
  assert.deepEqual(retry.value, {
    type: "retry",
    attempt: 1,
    delayMs: 30_000,
    reason: "HTTP 500 from model API: The server had an error while processing your request",
  });
  // Asked for the next event first, so the router is asleep when the signal fires.
  const next = stream.next();
  controller.abort();
  assert.deepEqual(await next, {
    done: false,
    value: { type: "error", kind: "aborted", message: ABORTED_MESSAGE },
  });
  assert.deepEqual(await stream.next(), { done: true, value: undefined });
  // Had the sleep ignored the signal, a second attempt would have followed it.
  assert.equal(main.requests.length, 1);
});

Deno.test("createRouter() throws without targets", () => {
  assert.throws(() => createRouter({ targets: [] }), TypeError);
});

Deno.test("createRouter() does not sleep when the signal fired with the retry event", async () => {
  const main = new ScriptedProvider([HTTP500, { text: "too late" }]);
  const router = createRouter({
    targets: [target(main, "main", "m1")],
    retryBaseMs: 60_000,
    random: () => 0,
  });
  const controller = new AbortController();
  const events: StreamEvent[] = [];
  for await (const event of router.stream(request("m1"), controller.signal)) {
    events.push(event);
    if (event.type === "retry") controller.abort();
  }
  assert.deepEqual(events.map((event) => event.type), ["retry", "error"]);
  assert.equal(last(events, "error").kind, "aborted");
  assert.equal(main.requests.length, 1);
});

Deno.test("createRouter() stays on the fallback when the consumer stops reading at done", async () => {
  const main = new ScriptedProvider(() => HTTP500, { name: "main" });
  const backup = new ScriptedProvider([{ text: "one" }, { text: "two" }], { name: "backup" });
  const targets = [target(main, "main", "m1"), target(backup, "backup", "b1")];
  const router = createRouter({ targets, maxRetries: 1, ...FAST });
  // As the agent loop reads: it returns at `done`, so the generator is closed right there.
  const untilDone = async () => {
    for await (const event of router.stream(request("m1"))) {
      if (event.type === "done") return event;
    }
    throw new Error("no done event");
  };
  assert.equal((await untilDone()).provider, "backup");
  assert.equal(router.current, targets[1]);
  assert.equal((await untilDone()).message.content, "two");
  assert.equal(main.requests.length, 2, "the dead target was tried again with its retries");
  assert.equal(backup.requests.length, 2);
});

Deno.test("createRouter() under runTurn() starts every later round of the turn at the fallback", async () => {
  const main = new ScriptedProvider(() => HTTP500, { name: "main" });
  const backup = new ScriptedProvider([
    { toolCalls: [{ id: "c1", name: "missing", arguments: "{}" }] },
    { toolCalls: [{ id: "c2", name: "missing", arguments: "{}" }] },
    { text: "done" },
  ], { name: "backup" });
  const router = createRouter({
    targets: [target(main, "main", "m1"), target(backup, "backup", "b1")],
    maxRetries: 1,
    ...FAST,
  });
  const result = await runTurn({
    messages: [{ role: "user", content: "go" }],
    provider: router,
    model: "m1",
    tools: new ToolRegistry([]),
    workspace: "/nonexistent",
    emit: () => {},
  });
  assert.equal(result.exitReason, "COMPLETED", result.error);
  assert.equal(result.rounds, 3);
  assert.equal(main.requests.length, 2, "later rounds went to the dead provider first");
  assert.equal(backup.requests.length, 3);
});
