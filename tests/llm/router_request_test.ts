import assert from "node:assert/strict";
import { costOf, type ModelInfo, reasoningFor } from "../../src/llm/model_info.ts";
import { createRouter } from "../../src/llm/router.ts";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import {
  collect,
  info,
  last,
  request,
  target,
  wireTarget,
  withServers,
} from "./_router_helpers.ts";

const FAST = { retryBaseMs: 2, random: () => 0 };

Deno.test("createRouter() sends a budget model Anthropic thinking capped per reasoningFor", async () => {
  const big = info("claude-big", { reasoning: "budget", maxOutputTokens: 64_000 });
  const small = info("claude-small", { reasoning: "budget", maxOutputTokens: 8_192 });
  await withServers([[{ text: "one" }, { text: "two" }]], async ([s]) => {
    for (const model of [big, small]) {
      const router = createRouter({
        targets: [wireTarget(s, "anthropic", model.id, { api: "anthropic", info: model })],
      });
      last(await collect(router.stream(request(model.id, { thinking: "high" }))), "done");
    }
    const budgets = s.requests.map((r) =>
      (r.body.thinking as { budget_tokens?: unknown })?.budget_tokens
    );
    assert.deepEqual(budgets, [32_000, 7_168]);
    assert.deepEqual(budgets, [
      reasoningFor(big, "high")?.budgetTokens,
      reasoningFor(small, "high")?.budgetTokens,
    ]);
    assert.deepEqual(s.requests.map((r) => r.path), ["/v1/messages", "/v1/messages"]);
  });
});

Deno.test("createRouter() sends no reasoning parameter for a model that does not think", async () => {
  await withServers([[{ text: "one" }, { text: "two" }]], async ([s]) => {
    const router = createRouter({
      targets: [wireTarget(s, "local", "llama", { info: info("llama") })],
    });
    const stray = { effort: "high" as const, budgetTokens: 32_000 };
    last(await collect(router.stream(request("llama", { thinking: "high" }))), "done");
    last(await collect(router.stream(request("llama", { reasoning: stray }))), "done");
    for (const { body } of s.requests) {
      assert.ok(!("reasoning_effort" in body), JSON.stringify(body));
      assert.ok(!("reasoning" in body), JSON.stringify(body));
    }
  });
});

Deno.test('createRouter() sends effort "minimal" for thinking "off" where the model takes it', async () => {
  const model = info("o-mini", { reasoning: "effort", minimalEffort: true });
  await withServers([[{ text: "one" }]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "openai", "o-mini", { info: model })] });
    last(await collect(router.stream(request("o-mini", { thinking: "off" }))), "done");
    assert.equal(s.requests[0].body.reasoning_effort, "minimal");
  });
});

Deno.test("createRouter() prices an answer from the model's prices", async () => {
  const usage = { inputTokens: 1000, outputTokens: 500, cachedTokens: 200 };
  const priced = info("priced", { price: { input: 3, output: 15, cachedInput: 0.3 } });
  await withServers([[{ text: "Paid", usage }]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "main", "priced", { info: priced })] });
    const done = last(await collect(router.stream(request("priced"))), "done");
    assert.deepEqual(done.usage, { ...usage, reasoningTokens: 0 });
    assert.equal(done.cost, costOf(priced, done.usage!));
    // 800 plain × $3 + 200 cached × $0.30 + 500 out × $15, per million tokens.
    assert.ok(Math.abs(done.cost! - 0.00996) < 1e-12, String(done.cost));
  });
});

Deno.test("createRouter() reports no cost when the model has no price", async () => {
  const usage = { inputTokens: 1000, outputTokens: 500, cachedTokens: 200 };
  await withServers([[{ text: "Free", usage }]], async ([s]) => {
    const router = createRouter({ targets: [wireTarget(s, "local", "llama")] });
    const done = last(await collect(router.stream(request("llama"))), "done");
    assert.equal(done.usage?.inputTokens, 1000);
    assert.ok(!("cost" in done), JSON.stringify(done));
    assert.deepEqual([done.provider, done.model], ["local", "llama"]);
  });
});

Deno.test("createRouter() sends another model to the main provider with looked-up facts", async () => {
  const looked: [string, string][] = [];
  const reviewer = info("reviewer", { reasoning: "effort", price: { input: 1, output: 1 } });
  const lookup = (providerName: string, model: string): ModelInfo => {
    looked.push([providerName, model]);
    return reviewer;
  };
  await withServers(
    [[{ text: "Looks fine", usage: { inputTokens: 10, outputTokens: 10 } }]],
    async ([s]) => {
      const router = createRouter({ targets: [wireTarget(s, "main", "m1")], lookup });
      const events = await collect(router.stream(request("reviewer", { thinking: "low" })));
      const done = last(events, "done");
      assert.equal(s.requests[0].body.model, "reviewer");
      // The main target's model does not think; the looked-up one does.
      assert.equal(s.requests[0].body.reasoning_effort, "low");
      assert.deepEqual(looked, [["main", "reviewer"]]);
      assert.deepEqual([done.provider, done.model], ["main", "reviewer"]);
      assert.equal(done.cost, 20 / 1_000_000);
      assert.equal(router.current.model, "m1");
    },
  );
});

Deno.test("createRouter() keeps the main model for a request naming none", async () => {
  const main = new ScriptedProvider([{ text: "a" }, { text: "b" }]);
  const lookup = (): ModelInfo => assert.fail("lookup called for the main model");
  const router = createRouter({ targets: [target(main, "main", "m1")], lookup, ...FAST });
  last(await collect(router.stream(request(""))), "done");
  last(await collect(router.stream(request("m1"))), "done");
  assert.deepEqual(main.requests.map((r) => r.model), ["m1", "m1"]);
});
