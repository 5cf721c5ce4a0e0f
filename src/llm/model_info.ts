/**
 * What tern knows about one model: limits, abilities and prices, and the two decisions that
 * follow from them for a request: which reasoning parameters to send for a thinking level, and
 * what a call cost.
 */
import type { Usage } from "../core/messages.ts";
import type { ReasoningRequest, ThinkingLevel } from "./types.ts";

/** The wire API styles tern speaks. */
export type ApiStyle = "openai" | "openai-responses" | "anthropic";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Prompt tokens read from the cache; default: `input`. */
  cachedInput?: number;
  /** Prompt tokens written to the cache (Anthropic); default: `input`. */
  cacheWrite?: number;
}

/**
 * The most USD per million tokens tern takes as a price, from a server or from its own cache of
 * one: many times the dearest real model. A larger price (`"1e300"` would be `$Infinity`, stored
 * as null) is the server's mistake.
 */
export const MAX_PRICE_PER_MILLION = 10_000;

/** Whether `value` is a price tern takes: a number from 0 to {@linkcode MAX_PRICE_PER_MILLION}. */
export function isTakenPrice(value: unknown): value is number {
  return typeof value === "number" && value >= 0 && value <= MAX_PRICE_PER_MILLION;
}

export interface ModelInfo {
  /** The id sent to the API. */
  id: string;
  /** Context window in tokens (prompt + output). */
  contextWindow: number;
  /** Most output tokens one call may produce. */
  maxOutputTokens: number;
  /**
   * How the model thinks: `effort` (OpenAI's reasoning effort), `budget` (Anthropic's
   * thinking budget), absent when it does not (no reasoning parameter is ever sent).
   */
  reasoning?: "effort" | "budget";
  /** With `effort`: the model accepts "minimal", which is what `off` sends. */
  minimalEffort?: boolean;
  images: boolean;
  tools: boolean;
  /** Absent when unknown (local models, discovered ones): no cost is reported. */
  price?: ModelPrice;
  /** Where this entry came from. */
  source: "catalog" | "config" | "discovered" | "default";
  /**
   * True for a discovered model nothing described: its limits and abilities are tern's guesses
   * (`guessedModel()`), not the server's or the catalog's.
   */
  guessed?: boolean;
}

/** A catalog row: a model as one provider preset serves it. */
export interface CatalogEntry extends ModelInfo {
  /** The provider preset's name; `""` for a config entry that names no provider. */
  provider: string;
}

/** Thinking budgets (tokens) for APIs that take one; Anthropic's minimum is 1,024. */
export const THINKING_BUDGETS: Record<Exclude<ThinkingLevel, "off">, number> = {
  low: 4_000,
  medium: 10_000,
  high: 32_000,
};

const MIN_BUDGET = 1_024;

/**
 * The reasoning parameters for `level` on this model, or undefined to send none. A model
 * that does not think gets none at any level. `off`: Anthropic-style models get none (thinking
 * disabled); OpenAI reasoning models cannot stop reasoning, so they get their lowest effort
 * ("minimal" where accepted, else "low"). Budgets are capped to leave at least 1,024 tokens
 * of the output limit for the answer.
 */
export function reasoningFor(
  info: Pick<ModelInfo, "reasoning" | "minimalEffort" | "maxOutputTokens">,
  level: ThinkingLevel,
): ReasoningRequest | undefined {
  if (info.reasoning === undefined) return undefined;
  if (level === "off") {
    if (info.reasoning === "budget") return undefined;
    return { effort: info.minimalEffort ? "minimal" : "low", budgetTokens: 0 };
  }
  const cap = Math.max(MIN_BUDGET, info.maxOutputTokens - MIN_BUDGET);
  return { effort: level, budgetTokens: Math.min(THINKING_BUDGETS[level], cap) };
}

/** USD with enough digits to see small amounts: `$0.0012`, `$1.23`. */
export function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/**
 * The cost of one call in USD from the model's prices, or undefined when they are unknown.
 * Cached and cache-write tokens are part of `inputTokens` and priced at their own rates;
 * reasoning tokens are part of `outputTokens`.
 */
export function costOf(info: Pick<ModelInfo, "price">, usage: Usage): number | undefined {
  const price = info.price;
  if (price === undefined) return undefined;
  const cached = usage.cachedTokens;
  const written = usage.cacheWriteTokens ?? 0;
  const plain = Math.max(0, usage.inputTokens - cached - written);
  const total = plain * price.input + cached * (price.cachedInput ?? price.input) +
    written * (price.cacheWrite ?? price.input) + usage.outputTokens * price.output;
  return total / 1_000_000;
}

/**
 * What the prompt cache saved on one call in USD, against paying the full input price for
 * every prompt token: cached tokens at the input price less their cache price, less the extra
 * a cache write costs. Undefined when prices are unknown; 0 when nothing was cached or written.
 */
export function cacheSavingsOf(info: Pick<ModelInfo, "price">, usage: Usage): number | undefined {
  const price = info.price;
  if (price === undefined) return undefined;
  const read = usage.cachedTokens * (price.input - (price.cachedInput ?? price.input));
  const write = (usage.cacheWriteTokens ?? 0) * ((price.cacheWrite ?? price.input) - price.input);
  return (read - write) / 1_000_000;
}

/**
 * True for a model id fit to store and show: 1 to 256 characters, none of them whitespace,
 * control or format characters (no terminal escapes, no bidi overrides from a hostile server).
 */
export function isListableModelId(id: string): boolean {
  return id.length >= 1 && id.length <= 256 && !/[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(id);
}

/**
 * What tern guesses for a model a server lists but nobody describes, marked `guessed`: the
 * `unknownModel()` defaults, except that Anthropic's API serves only Claude models, which all
 * take 200k tokens of context and images.
 */
export function guessedModel(id: string, api: ApiStyle): ModelInfo {
  const info: ModelInfo = { ...unknownModel(id), source: "discovered", guessed: true };
  if (api === "anthropic") {
    info.contextWindow = 200_000;
    info.images = true;
  }
  return info;
}

/**
 * Defaults for a model nobody described: a modest window and output limit so compaction
 * starts early rather than late, tools assumed, no thinking, no price.
 */
export function unknownModel(id: string): ModelInfo {
  return {
    id,
    contextWindow: 32_768,
    maxOutputTokens: 8_192,
    images: false,
    tools: true,
    source: "default",
  };
}
