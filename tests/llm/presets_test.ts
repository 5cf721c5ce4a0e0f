import assert from "node:assert/strict";
import { ModelCatalog } from "../../src/llm/catalog.ts";
import { findPreset, PROVIDER_PRESETS } from "../../src/llm/presets.ts";

Deno.test("PROVIDER_PRESETS are consistent", () => {
  assert.deepEqual(Object.keys(PROVIDER_PRESETS).sort(), [
    "anthropic",
    "llamacpp",
    "lmstudio",
    "ollama",
    "openai",
    "openai-responses",
    "openrouter",
    "vllm",
  ]);
  for (const [name, preset] of Object.entries(PROVIDER_PRESETS)) {
    assert.equal(preset.name, name);
    const url = new URL(preset.baseUrl);
    assert.equal(preset.baseUrl.endsWith("/"), false, name);
    assert.equal(preset.local, url.hostname === "127.0.0.1", name);
    assert.equal(preset.keyRequired, !preset.local, name);
    if (preset.keyRequired) assert.ok(preset.keyEnv, name);
    if (preset.chat !== undefined) assert.equal(preset.api, "openai", name);
    assert.notEqual(preset.defaultModel, "", name);
  }
});

Deno.test("PROVIDER_PRESETS hosted default models are in the catalog", () => {
  const catalog = new ModelCatalog();
  for (const preset of Object.values(PROVIDER_PRESETS)) {
    if (preset.local && preset.name !== "ollama") continue;
    assert.ok(catalog.find(preset.name, preset.defaultModel), preset.name);
  }
});

Deno.test("PROVIDER_PRESETS set the wire dialect of OpenAI and OpenRouter", () => {
  assert.equal(PROVIDER_PRESETS.openai.chat?.maxTokensField, "max_completion_tokens");
  assert.equal(PROVIDER_PRESETS.openrouter.chat?.reasoningField, "reasoning");
  assert.equal(PROVIDER_PRESETS["openai-responses"].api, "openai-responses");
  assert.equal(PROVIDER_PRESETS.anthropic.keyEnv, "ANTHROPIC_API_KEY");
  assert.equal(PROVIDER_PRESETS.ollama.baseUrl, "http://127.0.0.1:11434/v1");
});

Deno.test("findPreset() ignores case and accepts aliases", () => {
  assert.equal(findPreset("OpenAI")?.name, "openai");
  assert.equal(findPreset("lm-studio")?.name, "lmstudio");
  assert.equal(findPreset("LM-Studio")?.name, "lmstudio");
  assert.equal(findPreset("llama.cpp")?.name, "llamacpp");
  assert.equal(findPreset("llama-cpp")?.name, "llamacpp");
  assert.equal(findPreset("vllm")?.baseUrl, "http://127.0.0.1:8000/v1");
});

Deno.test("findPreset() returns undefined for unknown names", () => {
  assert.equal(findPreset("nope"), undefined);
  assert.equal(findPreset("constructor"), undefined);
  assert.equal(findPreset(""), undefined);
});
