/**
 * From configuration to a working model connection: which provider (a config entry, a preset
 * or an API style), its base URL and key, the model and what the catalog knows about it, and
 * the fallback chain, all behind one router.
 *
 * Keys go only where they belong: `TERN_API_KEY` is the main provider's key; each fallback
 * gets only its own provider's variable; a project's files cannot define providers or key
 * variables (`project: false` with `guards: "keys"` in the settings table, src/config/settings.ts).
 */
import type { TernConfig } from "../config/mod.ts";
import { formatValue } from "../config/errors.ts";
import { shownUrl } from "../core/url_text.ts";
import { ModelCatalog } from "./catalog.ts";
import type { ApiStyle, ModelInfo } from "./model_info.ts";
import { clientError, ProviderSetupError } from "./errors.ts";
import { type RequestPlace, withSetupHint } from "./error_hints.ts";
import type { ChatDialect } from "./openai_chat_wire.ts";
import { findPreset, PROVIDER_PRESETS } from "./presets.ts";
import { createRouter, type Router, type RouteTarget } from "./router.ts";
import type { ResponsesTransport } from "./openai_responses.ts";
import type { Provider } from "./types.ts";

/** The configuration the model connection depends on. */
export type ModelConfig = Pick<
  TernConfig,
  | "provider"
  | "providers"
  | "model"
  | "baseUrl"
  | "apiKey"
  | "apiKeys"
  | "models"
  | "projectModels"
  | "ownModel"
  | "fallback"
  | "maxRetries"
  | "retryBaseMs"
  | "requestTimeoutMs"
  | "idleTimeoutMs"
>;

/** Which settings were given on purpose rather than left at their defaults. */
export interface ExplicitSettings {
  model: boolean;
  baseUrl: boolean;
  /**
   * Where the model came from when a project's file chose it (`project config <file>`): such a
   * model never picks the provider that receives the person's key.
   */
  projectModel?: string;
}

/** A provider with everything needed to talk to it. */
export interface ResolvedProvider {
  name: string;
  api: ApiStyle;
  baseUrl: string;
  /** Never printed. */
  apiKey?: string;
  /** The variable the key came from, for messages (`ANTHROPIC_API_KEY`). */
  keyVariable?: string;
  /** Where a missing key would be looked for, for the error message. */
  keyVariables: string[];
  keyRequired: boolean;
  headers?: Record<string, string>;
  chat?: ChatDialect;
  defaultModel?: string;
  /** The Responses API's transport (`providers.<name>.transport`); SSE when absent. */
  transport?: ResponsesTransport;
}

/** The model connection: the router and the main target it starts with. */
export interface ModelSetup {
  router: Router;
  primary: RouteTarget;
  /** The fallback chain's targets, in order, after `primary`. */
  fallbacks: RouteTarget[];
  catalog: ModelCatalog;
  /**
   * When a project's file chose the model (`config.ownModel`): the model the person's own
   * settings would use on the main provider, the AUTO reviewer's unless they set `reviewModel`.
   */
  ownModel?: string;
}

/**
 * Builds the router for `config`. Nothing is sent: discovery is `tern models`' business.
 * @throws {ProviderSetupError} for an unknown provider, a provider without an API or base
 * URL, a fallback naming an unknown provider, or a missing key a provider requires.
 */
export function setupModels(config: ModelConfig, explicit: ExplicitSettings): ModelSetup {
  const catalog = configuredCatalog(config);
  const main = resolveMainProvider(config, explicit, catalog);
  const model = chooseModel(main, config, explicit);
  const targets: RouteTarget[] = [target(main, model, config, catalog)];
  for (const entry of config.fallback) {
    const fallback = resolveFallback(entry, config, main, catalog);
    targets.push(target(fallback.provider, fallback.model, config, catalog));
  }
  const router = createRouter({
    targets,
    maxRetries: config.maxRetries,
    retryBaseMs: config.retryBaseMs,
    lookup: (providerName, model) => catalog.lookup(providerName, model),
  });
  const own = config.ownModel;
  return {
    router,
    primary: targets[0],
    fallbacks: targets.slice(1),
    catalog,
    ...(own === undefined
      ? {}
      : { ownModel: chooseModel(main, own, { ...explicit, model: own.explicit }) }),
  };
}

/** The model to use: the configured one, or the provider's default when none was chosen. */
export function chooseModel(
  main: Pick<ResolvedProvider, "defaultModel">,
  config: Pick<ModelConfig, "model">,
  explicit: ExplicitSettings,
): string {
  return !explicit.model && main.defaultModel ? main.defaultModel : config.model;
}

/**
 * The built-in catalog with the config's `models` applied. A row only a project's files added
 * (`projectModels`) describes its model but never picks the provider a model goes to.
 * @throws {ProviderSetupError} for an override the catalog cannot apply.
 */
export function configuredCatalog(
  config: Pick<ModelConfig, "models" | "projectModels" | "providers">,
): ModelCatalog {
  const providerNames = [...Object.keys(PROVIDER_PRESETS), ...Object.keys(config.providers)];
  const describeOnly = config.projectModels ?? [];
  try {
    return new ModelCatalog().withOverrides(config.models, { providerNames, describeOnly });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new ProviderSetupError(`Invalid "models" in config: ${detail}`);
  }
}

/**
 * `provider/model` → that provider (with only its own key) and model. A bare model runs on the
 * main provider. Model ids may hold a "/" themselves (OpenRouter's `qwen/qwen3-coder`): with
 * an unknown prefix the whole entry is a model of the main provider only when that provider's
 * catalog knows it; anything else is a mistyped provider, and an error says how to write it.
 */
function resolveFallback(
  entry: string,
  config: ModelConfig,
  main: ResolvedProvider,
  catalog: ModelCatalog,
): { provider: ResolvedProvider; model: string } {
  const slash = entry.indexOf("/");
  const prefix = entry.slice(0, Math.max(slash, 0));
  const named = slash > 0 && prefix !== main.name
    ? resolveNamedProvider(prefix, config, { primary: false, baseUrl: undefined })
    : undefined;
  if (named !== undefined) return { provider: named, model: entry.slice(slash + 1) };
  if (slash > 0 && prefix === main.name) return { provider: main, model: entry.slice(slash + 1) };
  if (slash <= 0 || catalog.entries(main.name).some((known) => known.id === entry)) {
    return { provider: main, model: entry };
  }
  throw new ProviderSetupError(
    `Cannot use fallback "${entry}": unknown provider "${prefix}"; write "provider/model" ` +
      `with a provider from ${knownProviders(config)} (for a model id that holds a "/", put ` +
      `its provider first: "${main.name}/${entry}")`,
  );
}

function target(
  provider: ResolvedProvider,
  model: string,
  config: ModelConfig,
  catalog: ModelCatalog,
): RouteTarget {
  if (provider.keyRequired && provider.apiKey === undefined) {
    throw new ProviderSetupError(
      `No API key for provider "${provider.name}" (${shownUrl(provider.baseUrl)}): set ` +
        `${provider.keyVariables.join(" or ")} in the environment or in .env`,
    );
  }
  const info: ModelInfo = catalog.lookup(provider.name, model);
  return {
    provider: createWireProvider(provider, config),
    providerName: provider.name,
    api: provider.api,
    model,
    info,
  };
}

/**
 * The wire provider for a resolved provider (one attempt per request; the router retries). Its
 * module loads on the first request, so a run pays only for the API it speaks.
 */
export function createWireProvider(
  provider: ResolvedProvider,
  timeouts: Pick<TernConfig, "requestTimeoutMs" | "idleTimeoutMs">,
): Provider {
  const options = {
    name: provider.name,
    baseUrl: provider.baseUrl,
    apiKey: provider.apiKey,
    headers: provider.headers,
    requestTimeoutMs: timeouts.requestTimeoutMs,
    idleTimeoutMs: timeouts.idleTimeoutMs,
  };
  // Checked now, not on the first request: a bad URL is a configuration error.
  if (!URL.canParse(options.baseUrl)) {
    throw new ProviderSetupError(
      `Cannot use provider "${provider.name}": invalid base URL ${JSON.stringify(options.baseUrl)}`,
    );
  }
  // What an error of the person's setup (a refused key, a wrong URL) names: never the key.
  const place: RequestPlace = {
    provider: provider.name,
    api: provider.api,
    baseUrl: provider.baseUrl,
    keySent: provider.apiKey !== undefined && provider.apiKey !== "",
    keyVariables: provider.keyVariables,
  };
  // "set" stands for a key from no known variable.
  if (provider.keyVariable !== undefined && provider.keyVariable !== "set") {
    place.keyVariable = provider.keyVariable;
  }
  if (provider.headers !== undefined) place.headers = provider.headers;
  let loading: Promise<Provider> | undefined;
  const load = async (): Promise<Provider> => {
    switch (provider.api) {
      case "anthropic":
        return (await import("./anthropic.ts")).createAnthropicProvider(options);
      case "openai-responses":
        return (await import("./openai_responses.ts")).createOpenAiResponsesProvider({
          ...options,
          transport: provider.transport,
        });
      case "openai":
        return (await import("./openai_chat.ts")).createOpenAiChatProvider({
          ...options,
          dialect: provider.chat,
        });
    }
  };
  return {
    name: provider.name,
    async *stream(request, signal) {
      let wire: Provider;
      try {
        wire = await (loading ??= load());
      } catch (error) {
        // Providers never throw; a module that cannot load is a failed request like any other.
        loading = undefined;
        const detail = error instanceof Error ? error.message : String(error);
        yield clientError(`Cannot load the ${provider.api} provider: ${detail}`);
        return;
      }
      for await (const event of wire.stream(request, signal)) {
        yield event.type === "error" ? withSetupHint(event, place, request.model) : event;
      }
    },
    async close() {
      const wire = await loading?.catch(() => undefined);
      await wire?.close?.();
    },
  };
}

/**
 * The main provider: `provider` from config or `--provider`; without one, the catalog's
 * provider of the model when no base URL was given (so `--model claude-sonnet-4-5` alone
 * reaches Anthropic), else an OpenAI-compatible API at `baseUrl`. A model a project's file
 * chose (`explicit.projectModel`) never picks a provider this way, nor does a catalog row only a
 * project's file added (`configuredCatalog()`).
 * @throws {ProviderSetupError} for an unknown provider, or a project's model that would
 *   pick one.
 */
export function resolveMainProvider(
  config: ModelConfig,
  explicit: ExplicitSettings,
  catalog: ModelCatalog,
): ResolvedProvider {
  const baseUrl = explicit.baseUrl ? config.baseUrl : undefined;
  let name = config.provider;
  if (name === undefined && baseUrl === undefined) {
    const owner = catalog.providerOf(config.model);
    if (owner !== undefined && owner !== "openai") {
      if (explicit.projectModel !== undefined) {
        throw new ProviderSetupError(
          `Cannot use model "${config.model}" from ${explicit.projectModel}: it belongs to ` +
            `provider "${owner}", and a project's files may not choose the provider that ` +
            `receives your keys; choose it yourself with --provider ${owner}, TERN_PROVIDER or ` +
            '"provider" in ~/.tern/config.jsonc',
        );
      }
      name = owner;
    }
  }
  if (name === undefined) return compatibleProvider(config);
  const resolved = resolveNamedProvider(name, config, { primary: true, baseUrl });
  if (resolved === undefined) {
    throw new ProviderSetupError(
      `Unknown provider ${formatValue(name)}: use one from ${knownProviders(config)}, ` +
        'or an API style ("openai", "openai-responses", "anthropic") with --base-url',
    );
  }
  return resolved;
}

/** No provider named: an OpenAI-compatible API at `baseUrl` with the usual key chain. */
function compatibleProvider(config: ModelConfig): ResolvedProvider {
  const official = new URL(config.baseUrl).hostname === "api.openai.com";
  const resolved: ResolvedProvider = {
    name: official ? "openai" : "openai-compatible",
    api: "openai",
    baseUrl: config.baseUrl,
    keyVariables: ["TERN_API_KEY", "OPENAI_API_KEY"],
    keyRequired: official,
  };
  if (official) resolved.chat = PROVIDER_PRESETS.openai?.chat;
  if (config.apiKey !== undefined) {
    resolved.apiKey = config.apiKey;
    // Where it came from, for `tern models` and error hints: one of the two, else the
    // variable apiKeyEnv named (which `apiKeys` holds too).
    const from = (name: string) => config.apiKeys[name] === config.apiKey;
    resolved.keyVariable = resolved.keyVariables.find(from) ??
      Object.keys(config.apiKeys).find(from) ?? "set";
  }
  return resolved;
}

/**
 * A provider by name: a `providers` entry (over the preset of the same name, if any), else a
 * preset. The main provider may take `TERN_API_KEY` and an explicit base URL; fallbacks use
 * only their own key variable and base URL. Undefined for an unknown name.
 * @throws {ProviderSetupError} for a config entry without an API style or base URL.
 */
export function resolveNamedProvider(
  name: string,
  config: Pick<ModelConfig, "providers" | "apiKeys">,
  options: { primary: boolean; baseUrl: string | undefined },
): ResolvedProvider | undefined {
  const entry = Object.hasOwn(config.providers, name) ? config.providers[name] : undefined;
  const preset = findPreset(name);
  if (entry === undefined && preset === undefined) return undefined;
  const api = entry?.api ?? preset?.api;
  const baseUrl = options.baseUrl ?? entry?.baseUrl ?? preset?.baseUrl;
  if (api === undefined || baseUrl === undefined) {
    const missing = api === undefined ? '"api"' : '"baseUrl"';
    throw new ProviderSetupError(
      `Cannot use provider "${name}" from config: it needs ${missing} ` +
        `(a provider that is not a preset needs both "api" and "baseUrl")`,
    );
  }
  const keyEnv = entry?.apiKeyEnv ?? preset?.keyEnv;
  const keyVariables = [...(options.primary ? ["TERN_API_KEY"] : []), ...(keyEnv ? [keyEnv] : [])];
  const resolved: ResolvedProvider = {
    name: entry === undefined && preset ? preset.name : name,
    api,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    keyVariables,
    // A preset's key is required only at the preset's own server; a local proxy may need none.
    keyRequired: (preset?.keyRequired ?? false) && baseUrl === preset?.baseUrl,
  };
  for (const variable of keyVariables) {
    const value = config.apiKeys[variable];
    if (value !== undefined) {
      resolved.apiKey = value;
      resolved.keyVariable = variable;
      break;
    }
  }
  const headers = { ...preset?.headers, ...entry?.headers };
  if (Object.keys(headers).length > 0) resolved.headers = headers;
  if (preset?.chat) resolved.chat = preset.chat;
  const defaultModel = entry?.defaultModel ?? preset?.defaultModel;
  if (defaultModel !== undefined) resolved.defaultModel = defaultModel;
  if (entry?.transport !== undefined) resolved.transport = entry.transport;
  return resolved;
}

function knownProviders(config: Pick<ModelConfig, "providers">): string {
  const names = [...new Set([...Object.keys(config.providers), ...Object.keys(PROVIDER_PRESETS)])];
  return names.map((name) => `"${name}"`).join(", ");
}
