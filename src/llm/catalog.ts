/**
 * The model catalog: what tern knows about each model (limits, reasoning style, images, tools,
 * prices), keyed by provider preset and model id. It starts from the built-in list
 * (builtin_models.ts, prices as published by the vendors in 2025); the configuration's `models`
 * overrides win over it, and models discovered at a server's `GET /models` fill the gaps.
 */
import { BUILTIN_MODEL_LIST } from "./builtin_models.ts";
import { type CatalogEntry, type ModelInfo, type ModelPrice, unknownModel } from "./model_info.ts";
import { PROVIDER_PRESETS } from "./presets.ts";

/** The built-in models (deeply frozen). Configuration overrides them; see ModelCatalog. */
export const BUILTIN_MODELS: readonly CatalogEntry[] = Object.freeze(
  BUILTIN_MODEL_LIST.map((entry) => {
    if (entry.price !== undefined) Object.freeze(entry.price);
    return Object.freeze(entry);
  }),
);

/**
 * A configuration's change to one model; absent fields keep the catalog's value. `reasoning:
 * "none"` removes reasoning (no parameter is sent); `price` fields merge into the known price.
 */
export interface ModelOverride {
  contextWindow?: number;
  maxOutputTokens?: number;
  reasoning?: "effort" | "budget" | "none";
  minimalEffort?: boolean;
  images?: boolean;
  tools?: boolean;
  price?: Partial<ModelPrice>;
}

/** Options of `ModelCatalog.withOverrides()`. */
export interface OverrideOptions {
  /** Names that make `<name>/<model>` a provider-qualified key. Default: the preset names. */
  providerNames?: readonly string[];
  /**
   * Keys that describe a model but never route one (a project's `models`): a row one of them
   * adds is looked up like any other, but never makes `providerOf()` pick its provider.
   */
  describeOnly?: readonly string[];
}

/** The providers whose built-in models pick a provider when none is configured, in order. */
const HOME_PROVIDERS = ["openai", "anthropic"];

/**
 * Models by (provider, id). Lookups fall back from the exact entry to looser matches (see
 * `find`), so `qwen3-coder:30b` at Ollama or `openai/gpt-5` at a proxy still get known limits.
 */
export class ModelCatalog {
  /** Insertion order is lookup priority among providers: built-ins, config, discovered. */
  readonly #rows = new Map<string, CatalogEntry>();
  /** Rows added by a `describeOnly` override: `providerOf()` never counts them. */
  readonly #describing = new Set<string>();

  /** @throws {TypeError} when a (provider, id) pair appears twice. */
  constructor(entries: readonly CatalogEntry[] = BUILTIN_MODELS) {
    for (const entry of entries) {
      const key = keyOf(entry.provider, entry.id);
      if (this.#rows.has(key)) {
        throw new TypeError(`Cannot build model catalog: ${quoted(entry)} is listed twice`);
      }
      this.#rows.set(key, copyEntry(entry));
    }
  }

  /**
   * A new catalog with the configuration's overrides applied; this one is unchanged. A key is
   * `<provider>/<model>` when the part before its first `/` is a provider name, else a bare
   * model id (so `qwen/qwen3-coder` is OpenRouter's id, `openai/gpt-5` is gpt-5 at OpenAI). A
   * bare id changes every entry with exactly that id. A model the key's provider does not list is
   * added from what `find()` knows of its id elsewhere (`work/claude-sonnet-4-5` keeps Claude's
   * window and prices but for what the override names), else from `unknownModel()` defaults
   * (with provider `""` for a bare id). Changed entries get source
   * "config". A row an `options.describeOnly` key adds never picks a provider (`providerOf()`).
   * Call it before `add()`: discovered copies of known models do not see later overrides.
   * @throws {RangeError} for a limit that is not a positive integer or a negative price.
   * @throws {TypeError} for a price without `input` and `output` on a model that had none.
   */
  withOverrides(
    overrides: Record<string, ModelOverride>,
    options: OverrideOptions = {},
  ): ModelCatalog {
    const names = new Set(options.providerNames ?? Object.keys(PROVIDER_PRESETS));
    const describeOnly = new Set(options.describeOnly);
    const next = new ModelCatalog([...this.#rows.values()]);
    for (const row of this.#describing) next.#describing.add(row);
    for (const [key, override] of Object.entries(overrides)) {
      const slash = key.indexOf("/");
      const qualified = slash > 0 && names.has(key.slice(0, slash));
      const provider = qualified ? key.slice(0, slash) : undefined;
      const id = qualified ? key.slice(slash + 1) : key;
      if (id === "") {
        throw new TypeError(`Cannot override model ${JSON.stringify(key)}: no model id`);
      }
      const targets = provider === undefined
        ? [...next.#rows.values()].filter((entry) => entry.id === id)
        : [next.#rows.get(keyOf(provider, id))].filter((entry) => entry !== undefined);
      const adds = targets.length === 0;
      if (adds) {
        // A known model under a provider of the person's own (a proxy's `work/claude-…`) keeps
        // what the catalog knows of it (its window, reasoning, images, the rest of its price):
        // the override changes only what it names. Only a model nothing matches starts from the
        // defaults.
        const known = next.#resolve(provider, id, (entry) => entry.source !== "discovered");
        targets.push(
          known === undefined
            ? { provider: provider ?? "", ...unknownModel(id) }
            : { ...copyEntry(known), provider: provider ?? "", id },
        );
      }
      for (const target of targets) {
        const row = keyOf(target.provider, id);
        next.#rows.set(row, applyOverride(target, override, key));
        if (adds && describeOnly.has(key)) next.#describing.add(row);
      }
    }
    return next;
  }

  /**
   * Adds discovered models. Never replaces a catalog or config entry (a discovered one is
   * refreshed). An entry that tells no more than `unknownModel()` defaults, or whose id the
   * configuration covers, is stored with the data `find()` already resolves for it (so
   * Ollama's `llama3.1:8b` keeps the catalog's `llama3.1` limits); otherwise it is stored as is.
   */
  add(entries: readonly CatalogEntry[]): void {
    for (const entry of entries) {
      const key = keyOf(entry.provider, entry.id);
      const existing = this.#rows.get(key);
      if (existing !== undefined && existing.source !== "discovered") continue;
      const known = this.#resolve(entry.provider, entry.id, (row) => row.source !== "discovered");
      const useKnown = known !== undefined && (known.source === "config" || !carriesData(entry));
      this.#rows.set(
        key,
        useKnown
          ? { ...copyEntry(known), provider: entry.provider, id: entry.id }
          : copyEntry(entry),
      );
    }
  }

  /**
   * What the catalog knows about `model` at `provider`, with `id` set to `model`. Tries, in
   * order: the exact (provider, id) entry; the same id under any provider; the id after the
   * last `/` (`openai/gpt-5` → `gpt-5`); the id before a `:` tag (`qwen3-coder:30b` →
   * `qwen3-coder`); the id without a trailing date (`claude-sonnet-4-5-20250929` →
   * `claude-sonnet-4-5`, `gpt-4o-2024-08-06` → `gpt-4o`) and its `-0` and `-latest` aliases
   * (`claude-sonnet-4-20250514` → `claude-sonnet-4-0`). Each candidate id is tried at
   * `provider` first, then at any provider. Undefined when nothing matches.
   */
  find(provider: string | undefined, model: string): ModelInfo | undefined {
    const found = this.#resolve(provider, model, () => true);
    if (found === undefined) return undefined;
    const { provider: _provider, ...info } = copyEntry(found);
    return { ...info, id: model };
  }

  /** `find()`, or `unknownModel(model)` defaults when nothing matches. */
  lookup(provider: string | undefined, model: string): ModelInfo {
    return this.find(provider, model) ?? unknownModel(model);
  }

  /** Copies of the entries, of one provider when given, in catalog order. */
  entries(provider?: string): CatalogEntry[] {
    return [...this.#rows.values()]
      .filter((entry) => provider === undefined || entry.provider === provider)
      .map(copyEntry);
  }

  /**
   * The provider a bare model id belongs to ("openai" or "anthropic", first match), used to
   * pick a provider when none is configured. Undefined for ids neither lists. A row only a
   * `describeOnly` override added does not count: a project's file may describe a model, never
   * choose where the person's model goes (and with it their key).
   */
  providerOf(model: string): string | undefined {
    return HOME_PROVIDERS.find((provider) => {
      const row = keyOf(provider, model);
      return this.#rows.has(row) && !this.#describing.has(row);
    });
  }

  #resolve(
    provider: string | undefined,
    model: string,
    accept: (entry: CatalogEntry) => boolean,
  ): CatalogEntry | undefined {
    const tail = model.slice(model.lastIndexOf("/") + 1);
    const candidates = [model, tail, untagged(model), untagged(tail), ...undated(tail)];
    for (const id of new Set(candidates)) {
      if (provider !== undefined) {
        const exact = this.#rows.get(keyOf(provider, id));
        if (exact !== undefined && accept(exact)) return exact;
      }
      for (const entry of this.#rows.values()) {
        if (entry.id === id && accept(entry)) return entry;
      }
    }
    return undefined;
  }
}

function keyOf(provider: string, id: string): string {
  return `${provider}\u0000${id}`;
}

/** A snapshot id's alias candidates: without its date, then that plus `-0` and `-latest`. */
function undated(id: string): string[] {
  const match = /^(.+?)-(?:\d{8}|\d{4}-\d{2}-\d{2})$/.exec(id);
  if (match === null) return [];
  const base = match[1];
  return [base, `${base}-0`, `${base}-latest`];
}

function untagged(id: string): string {
  const colon = id.indexOf(":");
  return colon > 0 ? id.slice(0, colon) : id;
}

function quoted(entry: CatalogEntry): string {
  return JSON.stringify(entry.provider === "" ? entry.id : `${entry.provider}/${entry.id}`);
}

function copyEntry(entry: CatalogEntry): CatalogEntry {
  const copy = { ...entry };
  if (entry.price !== undefined) copy.price = { ...entry.price };
  return copy;
}

/** True when a discovered entry says more than `unknownModel()` would. */
function carriesData(entry: CatalogEntry): boolean {
  // Guesses are not data: a known entry that matches the id wins over them.
  if (entry.guessed) return false;
  const defaults = unknownModel(entry.id);
  return entry.contextWindow !== defaults.contextWindow ||
    entry.maxOutputTokens !== defaults.maxOutputTokens || entry.images !== defaults.images ||
    entry.tools !== defaults.tools || entry.reasoning !== undefined || entry.price !== undefined;
}

function applyOverride(entry: CatalogEntry, override: ModelOverride, key: string): CatalogEntry {
  const next: CatalogEntry = { ...copyEntry(entry), source: "config" };
  const limit = (name: "contextWindow" | "maxOutputTokens") => {
    const value = override[name];
    if (value === undefined) return;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(
        `Cannot override model ${JSON.stringify(key)}: "${name}" must be a positive integer`,
      );
    }
    next[name] = value;
  };
  limit("contextWindow");
  limit("maxOutputTokens");
  // A smaller window also bounds the output unless the override sets the output itself.
  if (override.maxOutputTokens === undefined) {
    next.maxOutputTokens = Math.min(next.maxOutputTokens, next.contextWindow);
  }
  if (override.images !== undefined) next.images = override.images;
  if (override.tools !== undefined) next.tools = override.tools;
  if (override.minimalEffort !== undefined) next.minimalEffort = override.minimalEffort;
  if (override.reasoning === "none") {
    delete next.reasoning;
    delete next.minimalEffort;
  } else if (override.reasoning !== undefined) {
    next.reasoning = override.reasoning;
  }
  if (override.price !== undefined) next.price = mergePrice(next.price, override.price, key);
  return next;
}

function mergePrice(
  known: ModelPrice | undefined,
  change: Partial<ModelPrice>,
  key: string,
): ModelPrice {
  const merged: Partial<ModelPrice> = { ...known };
  for (const field of ["input", "output", "cachedInput", "cacheWrite"] as const) {
    const value = change[field];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) {
      throw new RangeError(
        `Cannot override model ${JSON.stringify(key)}: price "${field}" must be a number ≥ 0`,
      );
    }
    merged[field] = value;
  }
  const { input, output } = merged;
  if (input === undefined || output === undefined) {
    throw new TypeError(
      `Cannot override model ${JSON.stringify(key)}: a price needs "input" and "output"`,
    );
  }
  return { ...merged, input, output };
}
