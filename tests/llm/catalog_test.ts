import assert from "node:assert/strict";
import { BUILTIN_MODELS, ModelCatalog, type ModelOverride } from "../../src/llm/catalog.ts";
import { type CatalogEntry, unknownModel } from "../../src/llm/model_info.ts";
import { PROVIDER_PRESETS } from "../../src/llm/presets.ts";

function entry(provider: string, id: string, fields: Partial<CatalogEntry> = {}): CatalogEntry {
  return { provider, ...unknownModel(id), source: "catalog", ...fields };
}

function overridden(overrides: Record<string, ModelOverride>): ModelCatalog {
  return new ModelCatalog().withOverrides(overrides);
}

Deno.test("BUILTIN_MODELS lists the required models", () => {
  const ids = new Set(BUILTIN_MODELS.map((e) => `${e.provider}/${e.id}`));
  const required = [
    ...["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"]
      .map((id) => `openai/${id}`),
    ...["gpt-4o", "gpt-4o-mini", "o3", "o4-mini"].map((id) => `openai/${id}`),
    ...["claude-opus-4-1", "claude-opus-4-0", "claude-sonnet-4-5", "claude-sonnet-4-0"]
      .map((id) => `anthropic/${id}`),
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-3-5-haiku-latest",
    "openrouter/openai/gpt-5",
    "openrouter/anthropic/claude-sonnet-4.5",
    "openrouter/qwen/qwen3-coder",
    "openrouter/deepseek/deepseek-chat-v3.1",
    "ollama/qwen3-coder",
    "ollama/gpt-oss:20b",
    "ollama/llama3.1",
  ];
  assert.deepEqual(required.filter((id) => !ids.has(id)), []);
});

Deno.test("BUILTIN_MODELS entries are sane and unique", () => {
  const seen = new Set<string>();
  for (const e of BUILTIN_MODELS) {
    const name = `${e.provider}/${e.id}`;
    assert.equal(seen.has(name), false, `${name} appears twice`);
    seen.add(name);
    assert.ok(Object.hasOwn(PROVIDER_PRESETS, e.provider), `${name}: unknown provider`);
    assert.equal(e.source, "catalog", name);
    assert.ok(Number.isSafeInteger(e.maxOutputTokens) && e.maxOutputTokens > 0, name);
    assert.ok(Number.isSafeInteger(e.contextWindow), name);
    assert.ok(e.contextWindow > e.maxOutputTokens, `${name}: window not above output limit`);
    if (e.minimalEffort) assert.equal(e.reasoning, "effort", name);
    const local = PROVIDER_PRESETS[e.provider].local;
    assert.equal(e.price === undefined, local, `${name}: price presence does not fit the host`);
    if (e.price === undefined) continue;
    const { input, output, cachedInput = input, cacheWrite = input } = e.price;
    for (const value of [input, output, cachedInput, cacheWrite]) {
      assert.ok(Number.isFinite(value) && value >= 0, `${name}: bad price ${value}`);
    }
    assert.ok(cachedInput <= input, `${name}: cached input dearer than input`);
    if (e.id.includes("claude")) {
      assert.ok(Math.abs(cacheWrite - 1.25 * input) < 1e-9, `${name}: cache write is not 1.25×`);
    }
  }
});

Deno.test("BUILTIN_MODELS gives each family its reasoning style", () => {
  const catalog = new ModelCatalog();
  for (const id of ["gpt-5", "gpt-5-mini", "gpt-5-nano"]) {
    assert.deepEqual(
      [catalog.find("openai", id)?.reasoning, catalog.find("openai", id)?.minimalEffort],
      ["effort", true],
      id,
    );
  }
  for (const id of ["o3", "o4-mini"]) {
    assert.equal(catalog.find("openai", id)?.reasoning, "effort", id);
    assert.equal(catalog.find("openai", id)?.minimalEffort, undefined, id);
  }
  for (const id of ["gpt-4.1", "gpt-4o", "claude-3-5-haiku-latest"]) {
    assert.equal(catalog.find(undefined, id)?.reasoning, undefined, id);
  }
  for (const id of ["claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5"]) {
    assert.equal(catalog.find("anthropic", id)?.reasoning, "budget", id);
  }
  assert.throws(() => {
    (BUILTIN_MODELS[0] as { contextWindow: number }).contextWindow = 1;
  }, TypeError);
});

Deno.test("ModelCatalog.find() prefers the exact provider entry", () => {
  const catalog = new ModelCatalog([
    entry("a", "m", { contextWindow: 1_000 }),
    entry("b", "m", { contextWindow: 2_000 }),
  ]);
  assert.equal(catalog.find("b", "m")?.contextWindow, 2_000);
  assert.equal(catalog.find("c", "m")?.contextWindow, 1_000);
  assert.equal(catalog.find(undefined, "m")?.contextWindow, 1_000);
  const builtin = new ModelCatalog();
  assert.equal(builtin.find("openrouter", "openai/gpt-5")?.minimalEffort, undefined);
  assert.equal(builtin.find("openai-responses", "gpt-5")?.minimalEffort, true);
  assert.equal(builtin.find("vllm", "qwen3-coder")?.contextWindow, 262_144);
});

Deno.test("ModelCatalog.find() falls back to the id after the last slash", () => {
  const catalog = new ModelCatalog();
  const info = catalog.find("lmstudio", "openai/gpt-4o");
  assert.equal(info?.id, "openai/gpt-4o");
  assert.equal(info?.contextWindow, 128_000);
  assert.equal(info?.price?.input, 2.5);
  assert.equal(catalog.find("vllm", "openai/gpt-oss:20b")?.reasoning, "effort");
  const exactFirst = new ModelCatalog([entry("x", "m"), entry("x", "org/m", { tools: false })]);
  assert.equal(exactFirst.find("x", "org/m")?.tools, false);
});

Deno.test("ModelCatalog.find() falls back to the id before a tag", () => {
  const catalog = new ModelCatalog();
  const info = catalog.find("ollama", "qwen3-coder:30b");
  assert.deepEqual(info, { ...catalog.find("ollama", "qwen3-coder"), id: "qwen3-coder:30b" });
  assert.equal(info?.contextWindow, 262_144);
  assert.equal(catalog.find("ollama", "gpt-oss:20b")?.maxOutputTokens, 32_768);
  assert.equal(catalog.find("openrouter", "qwen/qwen3-coder:nitro")?.price?.input, 0.22);
  assert.equal(catalog.find("ollama", "library/llama3.1:70b")?.contextWindow, 131_072);
});

Deno.test("ModelCatalog.lookup() gives unknownModel() defaults when nothing matches", () => {
  const catalog = new ModelCatalog();
  assert.equal(catalog.find("openai", "gpt-99"), undefined);
  assert.deepEqual(catalog.lookup("openai", "gpt-99"), unknownModel("gpt-99"));
  assert.deepEqual(catalog.lookup(undefined, "x/y:z"), unknownModel("x/y:z"));
});

Deno.test("ModelCatalog.lookup() returns copies", () => {
  const catalog = new ModelCatalog();
  const info = catalog.lookup("openai", "gpt-5");
  info.contextWindow = 1;
  if (info.price) info.price.input = 99;
  assert.equal(catalog.lookup("openai", "gpt-5").contextWindow, 400_000);
  assert.equal(catalog.lookup("openai", "gpt-5").price?.input, 1.25);
  assert.equal("provider" in info, false);
});

Deno.test("ModelCatalog.withOverrides() changes a bare id and leaves the original alone", () => {
  const base = new ModelCatalog();
  const catalog = base.withOverrides({ "gpt-4.1": { contextWindow: 200_000, images: false } });
  const info = catalog.lookup("openai", "gpt-4.1");
  assert.deepEqual(
    [info.contextWindow, info.maxOutputTokens, info.images, info.source, info.price?.output],
    [200_000, 32_768, false, "config", 8],
  );
  assert.equal(base.lookup("openai", "gpt-4.1").contextWindow, 1_047_576);
  assert.equal(catalog.lookup("openrouter", "openai/gpt-4.1").contextWindow, 1_047_576);
});

Deno.test("ModelCatalog.withOverrides() reads provider-qualified keys", () => {
  const catalog = overridden({ "openai/gpt-5": { price: { input: 1 } } });
  assert.deepEqual(catalog.lookup("openai", "gpt-5").price, {
    input: 1,
    output: 10,
    cachedInput: 0.125,
  });
  assert.equal(catalog.lookup("openrouter", "openai/gpt-5").price?.input, 1.25);
  const custom = new ModelCatalog().withOverrides({ "work/gpt-5": { maxOutputTokens: 4_000 } }, {
    providerNames: ["work"],
  });
  assert.equal(custom.lookup("work", "gpt-5").maxOutputTokens, 4_000);
  assert.equal(custom.lookup("openai", "gpt-5").maxOutputTokens, 128_000);
  // The rest is what the catalog knows of gpt-5, not an unknown model's defaults.
  const known = new ModelCatalog().lookup("openai", "gpt-5");
  assert.equal(custom.lookup("work", "gpt-5").contextWindow, known.contextWindow);
  assert.equal(custom.lookup("work", "gpt-5").reasoning, known.reasoning);
});

Deno.test("ModelCatalog.withOverrides() of a price at a person's provider keeps the model's data", () => {
  // README's example: Claude through a proxy provider "work", with a price of its own.
  const catalog = new ModelCatalog().withOverrides(
    { "work/claude-sonnet-4-5": { price: { input: 2.5, output: 12 } } },
    { providerNames: ["work"] },
  );
  const claude = new ModelCatalog().lookup("anthropic", "claude-sonnet-4-5");
  const work = catalog.lookup("work", "claude-sonnet-4-5");
  assert.equal(work.contextWindow, claude.contextWindow);
  assert.equal(work.images, claude.images);
  assert.equal(work.reasoning, claude.reasoning);
  assert.equal(work.price?.input, 2.5);
  assert.equal(work.price?.output, 12);
  // Cached reads keep the catalog's price rather than costing as much as fresh input.
  assert.equal(work.price?.cachedInput, claude.price?.cachedInput);
});

Deno.test("ModelCatalog.withOverrides() reads OpenRouter ids with and without the provider", () => {
  const bare = overridden({ "qwen/qwen3-coder": { contextWindow: 131_072 } });
  assert.equal(bare.lookup("openrouter", "qwen/qwen3-coder").contextWindow, 131_072);
  assert.equal(bare.lookup("ollama", "qwen3-coder").contextWindow, 262_144);
  const qualified = overridden({ "openrouter/qwen/qwen3-coder": { tools: false } });
  assert.equal(qualified.lookup("openrouter", "qwen/qwen3-coder").tools, false);
  assert.equal(qualified.entries("").length, 0);
});

Deno.test('ModelCatalog.withOverrides() removes reasoning with "none"', () => {
  const catalog = overridden({
    "gpt-5": { reasoning: "none" },
    "openrouter/anthropic/claude-sonnet-4.5": { reasoning: "none" },
    "gpt-4o": { reasoning: "effort", minimalEffort: true },
  });
  const gpt5 = catalog.lookup("openai", "gpt-5");
  assert.equal("reasoning" in gpt5 || "minimalEffort" in gpt5, false);
  assert.equal(catalog.lookup("openrouter", "anthropic/claude-sonnet-4.5").reasoning, undefined);
  assert.equal(catalog.lookup("anthropic", "claude-sonnet-4-5").reasoning, "budget");
  assert.deepEqual(
    [
      catalog.lookup("openai", "gpt-4o").reasoning,
      catalog.lookup("openai", "gpt-4o").minimalEffort,
    ],
    ["effort", true],
  );
});

Deno.test("ModelCatalog.withOverrides() adds unknown models from defaults", () => {
  const catalog = overridden({
    "my-model": { contextWindow: 65_536 },
    "vllm/Qwen/Qwen3-32B": { contextWindow: 4_096, price: { input: 0, output: 0 } },
  });
  assert.deepEqual(catalog.lookup("vllm", "my-model"), {
    ...unknownModel("my-model"),
    contextWindow: 65_536,
    source: "config",
  });
  assert.deepEqual(catalog.entries("").map((e) => e.id), ["my-model"]);
  assert.deepEqual(catalog.entries("vllm"), [{
    provider: "vllm",
    ...unknownModel("Qwen/Qwen3-32B"),
    contextWindow: 4_096,
    maxOutputTokens: 4_096,
    price: { input: 0, output: 0 },
    source: "config",
  }]);
});

Deno.test("ModelCatalog.withOverrides() rejects bad values", () => {
  const catalog = new ModelCatalog();
  assert.throws(() => catalog.withOverrides({ "gpt-5": { contextWindow: 0 } }), {
    name: "RangeError",
    message: 'Cannot override model "gpt-5": "contextWindow" must be a positive integer',
  });
  assert.throws(() => catalog.withOverrides({ "gpt-5": { price: { output: -1 } } }), RangeError);
  assert.throws(() => catalog.withOverrides({ "new": { price: { cachedInput: 1 } } }), {
    name: "TypeError",
    message: 'Cannot override model "new": a price needs "input" and "output"',
  });
  assert.throws(() => catalog.withOverrides({ "openai/": {} }), TypeError);
});

Deno.test("ModelCatalog() rejects a (provider, id) pair listed twice", () => {
  assert.throws(() => new ModelCatalog([entry("a", "m"), entry("a", "m")]), {
    name: "TypeError",
    message: 'Cannot build model catalog: "a/m" is listed twice',
  });
});

Deno.test("ModelCatalog.add() adds new models and never replaces known ones", () => {
  const catalog = new ModelCatalog();
  catalog.add([
    { provider: "openai", ...unknownModel("gpt-5"), source: "discovered" },
    { provider: "vllm", ...unknownModel("org/brand-new"), source: "discovered" },
  ]);
  assert.equal(catalog.lookup("openai", "gpt-5").contextWindow, 400_000);
  assert.equal(catalog.lookup("openai", "gpt-5").source, "catalog");
  assert.deepEqual(catalog.entries("vllm"), [
    { provider: "vllm", ...unknownModel("org/brand-new"), source: "discovered" },
  ]);
});

Deno.test("ModelCatalog.add() keeps catalog data for ids discovery says nothing about", () => {
  const catalog = new ModelCatalog();
  catalog.add([{ provider: "ollama", ...unknownModel("llama3.1:8b"), source: "discovered" }]);
  const stored = catalog.entries("ollama").find((e) => e.id === "llama3.1:8b");
  assert.deepEqual(stored, {
    ...catalog.entries("ollama").find((e) => e.id === "llama3.1"),
    id: "llama3.1:8b",
  });
});

Deno.test("ModelCatalog.add() lets server data beat a fallback but not the config", () => {
  const catalog = overridden({ "my-model": { contextWindow: 65_536 } });
  catalog.add([
    {
      provider: "vllm",
      ...unknownModel("qwen3-coder"),
      contextWindow: 40_960,
      source: "discovered",
    },
    { provider: "vllm", ...unknownModel("my-model"), contextWindow: 99_999, source: "discovered" },
  ]);
  assert.equal(catalog.lookup("vllm", "qwen3-coder").contextWindow, 40_960);
  assert.equal(catalog.lookup("ollama", "qwen3-coder").contextWindow, 262_144);
  assert.equal(catalog.lookup("vllm", "my-model").contextWindow, 65_536);
  assert.equal(catalog.lookup("vllm", "my-model").source, "config");
});

Deno.test("ModelCatalog.add() refreshes a discovered entry", () => {
  const catalog = new ModelCatalog([]);
  catalog.add([{
    provider: "p",
    ...unknownModel("m"),
    contextWindow: 1_000,
    source: "discovered",
  }]);
  catalog.add([{
    provider: "p",
    ...unknownModel("m"),
    contextWindow: 2_000,
    source: "discovered",
  }]);
  assert.deepEqual(catalog.entries().map((e) => e.contextWindow), [2_000]);
});

Deno.test("ModelCatalog.providerOf() names the provider of a bare built-in id", () => {
  const catalog = new ModelCatalog();
  assert.equal(catalog.providerOf("gpt-5"), "openai");
  assert.equal(catalog.providerOf("o3"), "openai");
  assert.equal(catalog.providerOf("claude-sonnet-4-5"), "anthropic");
  assert.equal(catalog.providerOf("qwen3-coder"), undefined);
  assert.equal(catalog.providerOf("openai/gpt-5"), undefined);
  assert.equal(catalog.providerOf("gpt-99"), undefined);
});

Deno.test("ModelCatalog.find() matches a dated snapshot id to its alias entry", () => {
  const catalog = new ModelCatalog();
  const cases: [string, string, string][] = [
    ["anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4-0"],
    ["anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1"],
    ["anthropic", "claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest"],
    ["openai", "gpt-4o-2024-08-06", "gpt-4o"],
  ];
  for (const [provider, dated, alias] of cases) {
    const found = catalog.find(provider, dated);
    const expected = catalog.find(provider, alias);
    assert.ok(found !== undefined && expected !== undefined, `${dated} is unknown`);
    assert.deepEqual(found, { ...expected, id: dated }, dated);
  }
  const sonnet = catalog.find("anthropic", "claude-sonnet-4-20250514");
  assert.equal(sonnet?.reasoning, "budget");
  assert.ok(sonnet?.price !== undefined);
  assert.equal(catalog.find("anthropic", "claude-nonesuch-20250514"), undefined);
});
