/**
 * The data of tern's built-in model catalog (re-exported by catalog.ts as BUILTIN_MODELS).
 *
 * Limits and USD prices per million tokens as published by the vendors, 2025 (OpenAI and
 * Anthropic pricing pages, OpenRouter model pages). Prices change: a `models` entry in the
 * configuration overrides any field here, and discovery fills in models missing from this list.
 */
import type { CatalogEntry, ModelInfo, ModelPrice } from "./model_info.ts";

/** What sets a model apart besides limits and price; hosted models read images unless told. */
type Traits = Partial<Pick<ModelInfo, "reasoning" | "minimalEffort" | "images">>;
type Limits = [contextWindow: number, maxOutputTokens: number];

/** Reasoning set by an effort (low / medium / high): OpenAI o-series, gpt-oss, Gemini. */
const EFFORT: Traits = { reasoning: "effort" };
/** The gpt-5 family also accepts "minimal". */
const GPT5_EFFORT: Traits = { reasoning: "effort", minimalEffort: true };
/** Anthropic models with extended thinking (a token budget). */
const BUDGET: Traits = { reasoning: "budget" };
const TEXT_ONLY: Traits = { images: false };

function hosted(
  provider: string,
  id: string,
  [contextWindow, maxOutputTokens]: Limits,
  price: ModelPrice,
  traits: Traits,
): CatalogEntry {
  return {
    provider,
    id,
    contextWindow,
    maxOutputTokens,
    images: true,
    tools: true,
    ...traits,
    price,
    source: "catalog",
  };
}

function openai(id: string, limits: Limits, price: ModelPrice, traits: Traits = {}): CatalogEntry {
  return hosted("openai", id, limits, price, traits);
}

function anthropic(id: string, limits: Limits, price: ModelPrice, traits: Traits): CatalogEntry {
  return hosted("anthropic", id, limits, price, traits);
}

function openrouter(id: string, limits: Limits, price: ModelPrice, traits: Traits): CatalogEntry {
  return hosted("openrouter", id, limits, price, traits);
}

/**
 * A model run by a local server: no price. The window is the model's own; a server may serve
 * less (Ollama uses `OLLAMA_CONTEXT_LENGTH` / `num_ctx`), so raise it there or override it here.
 */
function local(
  id: string,
  [contextWindow, maxOutputTokens]: Limits,
  traits: Traits = {},
): CatalogEntry {
  return {
    provider: "ollama",
    id,
    contextWindow,
    maxOutputTokens,
    images: false,
    tools: true,
    ...traits,
    source: "catalog",
  };
}

const GPT5_LIMITS: Limits = [400_000, 128_000];
const GPT41_LIMITS: Limits = [1_047_576, 32_768];
const GPT4O_LIMITS: Limits = [128_000, 16_384];
const O_LIMITS: Limits = [200_000, 100_000];

// Anthropic: cache reads cost 0.1 × input, cache writes (5-minute TTL) 1.25 × input.
const OPUS: ModelPrice = { input: 15, output: 75, cachedInput: 1.5, cacheWrite: 18.75 };
const SONNET: ModelPrice = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 };
const HAIKU_45: ModelPrice = { input: 1, output: 5, cachedInput: 0.1, cacheWrite: 1.25 };
const HAIKU_35: ModelPrice = { input: 0.8, output: 4, cachedInput: 0.08, cacheWrite: 1 };

const GPT5: ModelPrice = { input: 1.25, output: 10, cachedInput: 0.125 };
const GPT5_MINI: ModelPrice = { input: 0.25, output: 2, cachedInput: 0.025 };
const GPT41: ModelPrice = { input: 2, output: 8, cachedInput: 0.5 };
const GPT4O_MINI: ModelPrice = { input: 0.15, output: 0.6, cachedInput: 0.075 };

/** Prices as published by the vendors, 2025. */
export const BUILTIN_MODEL_LIST: readonly CatalogEntry[] = [
  openai("gpt-5", GPT5_LIMITS, GPT5, GPT5_EFFORT),
  openai("gpt-5-mini", GPT5_LIMITS, GPT5_MINI, GPT5_EFFORT),
  openai("gpt-5-nano", GPT5_LIMITS, { input: 0.05, output: 0.4, cachedInput: 0.005 }, GPT5_EFFORT),
  openai("gpt-4.1", GPT41_LIMITS, GPT41),
  openai("gpt-4.1-mini", GPT41_LIMITS, { input: 0.4, output: 1.6, cachedInput: 0.1 }),
  openai("gpt-4.1-nano", GPT41_LIMITS, { input: 0.1, output: 0.4, cachedInput: 0.025 }),
  openai("gpt-4o", GPT4O_LIMITS, { input: 2.5, output: 10, cachedInput: 1.25 }),
  openai("gpt-4o-mini", GPT4O_LIMITS, GPT4O_MINI),
  openai("o3", O_LIMITS, { input: 2, output: 8, cachedInput: 0.5 }, EFFORT),
  openai("o4-mini", O_LIMITS, { input: 1.1, output: 4.4, cachedInput: 0.275 }, EFFORT),

  anthropic("claude-opus-4-1", [200_000, 32_000], OPUS, BUDGET),
  anthropic("claude-opus-4-0", [200_000, 32_000], OPUS, BUDGET),
  anthropic("claude-sonnet-4-5", [200_000, 64_000], SONNET, BUDGET),
  anthropic("claude-sonnet-4-0", [200_000, 64_000], SONNET, BUDGET),
  anthropic("claude-3-7-sonnet-latest", [200_000, 64_000], SONNET, BUDGET),
  anthropic("claude-haiku-4-5", [200_000, 64_000], HAIKU_45, BUDGET),
  anthropic("claude-3-5-haiku-latest", [200_000, 8_192], HAIKU_35, {}),

  // OpenRouter passes the vendors' prices through. Its effort list may lack "minimal", so the
  // gpt-5 family gets plain EFFORT here; Anthropic models keep BUDGET so `off` sends nothing.
  // Sonnet 4.5 is listed at 1M tokens there, but these prices hold up to 200k.
  openrouter("openai/gpt-5", GPT5_LIMITS, GPT5, EFFORT),
  openrouter("openai/gpt-5-mini", GPT5_LIMITS, GPT5_MINI, EFFORT),
  openrouter("openai/gpt-4.1", GPT41_LIMITS, GPT41, {}),
  openrouter("openai/gpt-4o-mini", GPT4O_LIMITS, GPT4O_MINI, {}),
  openrouter("anthropic/claude-sonnet-4.5", [200_000, 64_000], SONNET, BUDGET),
  openrouter("anthropic/claude-opus-4.1", [200_000, 32_000], OPUS, BUDGET),
  openrouter("anthropic/claude-haiku-4.5", [200_000, 64_000], HAIKU_45, BUDGET),
  openrouter("google/gemini-2.5-pro", [1_048_576, 65_536], { input: 1.25, output: 10 }, EFFORT),
  openrouter("google/gemini-2.5-flash", [1_048_576, 65_535], { input: 0.3, output: 2.5 }, EFFORT),
  openrouter("qwen/qwen3-coder", [262_144, 65_536], { input: 0.22, output: 0.95 }, TEXT_ONLY),
  // Its hybrid thinking is switched on by a flag there, not by an effort: left off.
  openrouter(
    "deepseek/deepseek-chat-v3.1",
    [163_840, 32_768],
    { input: 0.2, output: 0.8 },
    TEXT_ONLY,
  ),

  local("qwen3-coder", [262_144, 65_536]),
  local("gpt-oss:20b", [131_072, 32_768], EFFORT),
  local("gpt-oss:120b", [131_072, 32_768], EFFORT),
  local("llama3.1", [131_072, 8_192]),
  local("qwen2.5-coder", [32_768, 8_192]),
  local("devstral", [131_072, 16_384]),
];
