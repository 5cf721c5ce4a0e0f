/**
 * `tern models`: what can be used now. Each provider that would work (the chosen one, config
 * providers, presets whose key is set) with its catalog models, plus what its server lists at
 * `GET /models` (unknown ones get conservative defaults). `--all` adds every preset; `--offline`
 * asks no server.
 */
import { isExplicitSource, loadConfig, type TernConfig } from "../config/mod.ts";
import { shownUrl, urlSecrets } from "../core/url_text.ts";
import type { ModelCatalog } from "../llm/catalog.ts";
import type { CatalogEntry } from "../llm/model_info.ts";
import { discoverModels } from "../llm/discovery.ts";
import { isFresh, readCachedModels, writeCachedModels } from "../llm/models_cache.ts";
import { PROVIDER_PRESETS } from "../llm/presets.ts";
import { MIN_SECRET_LENGTH, SecretMasker } from "../sandbox/secrets.ts";
import {
  chooseModel,
  configuredCatalog,
  type ResolvedProvider,
  resolveMainProvider,
  resolveNamedProvider,
} from "../llm/setup.ts";
import type { CommandLine } from "./args.ts";
import { processWriters, resolveWorkspace } from "./process_env.ts";
import type { RunFlags } from "./run.ts";
import { terminalWriters } from "./process_env.ts";

type ModelsLine = Extract<CommandLine, { command: "models" }>;

/** One provider's section of the listing. */
export interface ProviderListing {
  provider: string;
  api: string;
  /** The API root, its credentials hidden (`shownUrl`). */
  baseUrl: string;
  /** True when a request could be sent now (a key is set, or none is needed). */
  usable: boolean;
  /** The variable the key comes from, or where it would be looked for. */
  key: string;
  main: boolean;
  /** Why discovery failed, when it was tried and failed. */
  error?: string;
  /** When the server's models shown come from the cache: when they were listed (ISO time). */
  cachedAt?: string;
  models: CatalogEntry[];
}

/** Lists models; returns the exit code (0, or 2 for a bad configuration). */
export async function listModels(line: ModelsLine, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config, sources } = await loadConfig({ cwd: workspace, flags: flags.config });
  const catalog = configuredCatalog(config);
  const explicit = {
    model: isExplicitSource(sources.model),
    baseUrl: isExplicitSource(sources.baseUrl),
  };
  const main = resolveMainProvider(config, explicit, catalog);
  const providers = [main, ...otherProviders(config, main.name, line.all)];
  const listings = await Promise.all(
    providers.map((provider) =>
      listProvider(provider, provider === main, catalog, line.offline, config.ternHome)
    ),
  );
  // Model names and errors come from the providers' servers.
  const { out } = terminalWriters(processWriters(), { json: line.json });
  const model = chooseModel(main, config, explicit);
  out(line.json ? JSON.stringify(listings) + "\n" : listingText(listings, model));
  return 0;
}

/** Config providers, and presets with a key set (every preset with `all`). */
function otherProviders(
  config: TernConfig,
  mainName: string,
  all: boolean,
): ResolvedProvider[] {
  const names = new Set([...Object.keys(config.providers), ...Object.keys(PROVIDER_PRESETS)]);
  names.delete(mainName);
  const found: ResolvedProvider[] = [];
  for (const name of names) {
    const resolved = resolveNamedProvider(name, config, { primary: false, baseUrl: undefined });
    if (resolved === undefined) continue;
    const configured = config.providers[name] !== undefined;
    if (all || configured || resolved.apiKey !== undefined) found.push(resolved);
  }
  return found;
}

async function listProvider(
  provider: ResolvedProvider,
  main: boolean,
  catalog: ModelCatalog,
  offline: boolean,
  ternHome: string,
): Promise<ProviderListing> {
  const usable = provider.apiKey !== undefined || !provider.keyRequired;
  const listing: ProviderListing = {
    provider: provider.name,
    api: provider.api,
    // Shown and printed as JSON: without the credentials a base URL may carry.
    baseUrl: shownUrl(provider.baseUrl),
    usable,
    key: provider.keyVariable ??
      (provider.keyVariables.length > 0
        ? `not set (${provider.keyVariables.join(" or ")})`
        : "none needed"),
    main,
    models: catalog.entries(provider.name),
  };
  const cached = await readCachedModels(ternHome, provider.name, provider.baseUrl);
  const fromCache = () => {
    if (cached === undefined) return listing;
    catalog.add(cached.models);
    listing.models = catalog.entries(provider.name);
    listing.cachedAt = new Date(cached.listedAt).toISOString();
    return listing;
  };
  // Ask the chosen provider's server, and other usable ones, unless told not to or a listing
  // from the last MODELS_CACHE_TTL_MS is at hand.
  const local = PROVIDER_PRESETS[provider.name]?.local ?? false;
  if (offline || !usable || (local && !main)) return fromCache();
  if (cached !== undefined && isFresh(cached)) return fromCache();
  let discovered;
  try {
    discovered = await discoverModels({
      provider: provider.name,
      api: provider.api,
      baseUrl: provider.baseUrl,
      apiKey: provider.apiKey,
      headers: provider.headers,
    });
  } catch (error) {
    listing.error = withoutKey(error instanceof Error ? error.message : String(error), provider);
    return fromCache();
  }
  // A model the server names with the key in it is no model: it is neither shown nor cached.
  // A key shorter than any masked anywhere (a local server's "k") is no secret to find there:
  // it would match every model.
  const key = provider.apiKey;
  if (key && key.length >= MIN_SECRET_LENGTH) {
    discovered = discovered.filter((model) => !JSON.stringify(model).includes(key));
  }
  catalog.add(discovered);
  listing.models = catalog.entries(provider.name);
  try {
    await writeCachedModels(ternHome, provider.name, provider.baseUrl, discovered);
  } catch (error) {
    listing.error = error instanceof Error ? error.message : String(error);
  }
  return listing;
}

function listingText(listings: ProviderListing[], model: string): string {
  const lines: string[] = [];
  for (const listing of listings) {
    const state = listing.usable ? "" : "  (not usable: no key)";
    lines.push(
      `${listing.main ? "* " : "  "}${listing.provider}  ${listing.api}  ${listing.baseUrl}  ` +
        `key: ${listing.key}${state}`,
    );
    if (listing.error) lines.push(`    could not list the server's models: ${listing.error}`);
    if (listing.cachedAt) {
      lines.push(`    the server's models as listed at ${listing.cachedAt} (cached)`);
    }
    if (listing.models.length === 0) lines.push("    (no known models)");
    const rows = listing.models.map((entry) => modelRow(entry, listing.main && entry.id === model));
    lines.push(...table(rows));
    lines.push("");
  }
  lines.push(
    "* the provider in use; → its model. Prices in USD per million tokens (in/out/cached).",
  );
  return lines.join("\n") + "\n";
}

function modelRow(entry: CatalogEntry, current: boolean): string[] {
  const thinking = entry.reasoning === "effort"
    ? "thinks (effort)"
    : entry.reasoning === "budget"
    ? "thinks (budget)"
    : "-";
  const abilities = [entry.tools ? "tools" : "", entry.images ? "images" : ""]
    .filter((word) => word !== "").join(",") || "-";
  const price = entry.price
    ? `$${entry.price.input}/$${entry.price.output}/$${
      entry.price.cachedInput ?? entry.price.input
    }`
    : "-";
  return [
    `${current ? "  → " : "    "}${entry.id}`,
    `${kilo(entry.contextWindow)} ctx`,
    `${kilo(entry.maxOutputTokens)} out`,
    thinking,
    abilities,
    price,
    entry.guessed ? `${entry.source} (guessed)` : entry.source,
  ];
}

function kilo(tokens: number): string {
  return tokens >= 1000 ? `${Math.round(tokens / 1000)}k` : String(tokens);
}

/** Rows padded into columns. */
function table(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) =>
    row.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd()
  );
}

/**
 * `text` with the provider's key, header values and base URL credentials masked, as the masker finds them and line by
 * line: an API's error may quote what it was sent, and Deno's "Invalid header value" error
 * quotes a key that holds a line break with the break made a space.
 */
function withoutKey(
  text: string,
  provider: { apiKey?: string; headers?: Record<string, string>; baseUrl: string },
): string {
  // The base URL's own credentials too: an error quotes a URL, a server may echo its path.
  const values = [
    provider.apiKey ?? "",
    ...Object.values(provider.headers ?? {}),
    ...urlSecrets(provider.baseUrl),
  ];
  // The masker masks a value's parts too (`Bearer <key>`'s key).
  return new SecretMasker(values).mask(text);
}
