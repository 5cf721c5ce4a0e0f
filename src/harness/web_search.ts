/**
 * The web tools' options from the person's config: web_fetch's reader service and its key;
 * web_search's providers in order (default, then the fallbacks) whose key variable is set, and
 * the cache file in tern's home (`<ternHome>/web/<encoded workspace>.jsonl`), never the
 * repository's.
 */
import { join } from "../core/path.ts";
import type {
  WebFetchSettings,
  WebSearchProviderName,
  WebSearchSettings,
} from "../config/types.ts";
import type { WebFetchOptions } from "../tools/web_fetch.ts";
import { encodeCwd } from "../session/paths.ts";
import type { WebSearchOptions } from "../tools/web_search.ts";

/** Where the search cache of `workspace` lives. */
export function webCachePath(ternHome: string, workspace: string): string {
  return join(ternHome, "web", `${encodeCwd(workspace)}.jsonl`);
}

/** The variable's value, or undefined when it is unset or tern may not read it. */
function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** web_search's options for `workspace` from `settings`. */
export function webSearchOptions(
  settings: WebSearchSettings | undefined,
  places: { ternHome: string; workspace: string },
  env: (name: string) => string | undefined = readEnv,
): WebSearchOptions {
  const { providers, problems } = resolveSearchProviders(settings ?? {}, env);
  return {
    providers,
    problems,
    ...(settings?.cache === false ? {} : {
      cacheFile: webCachePath(places.ternHome, places.workspace),
    }),
  };
}

/** web_fetch's options from `settings`: the reader service and its key, when configured. */
export function webFetchOptions(
  settings: WebFetchSettings | undefined,
  env: (name: string) => string | undefined = readEnv,
): WebFetchOptions {
  if (settings?.reader === undefined) return {};
  const key = settings.readerKeyEnv === undefined ? undefined : env(settings.readerKeyEnv);
  return { reader: { base: settings.reader, ...(key ? { key } : {}) } };
}

/** The providers to ask, in order, and why any named one is left out. */
export function resolveSearchProviders(
  settings: WebSearchSettings,
  readEnv: (name: string) => string | undefined,
): { providers: Array<{ name: WebSearchProviderName; key: string }>; problems: string[] } {
  const order = [
    ...new Set([
      ...(settings.provider ? [settings.provider] : []),
      ...(settings.fallback ?? []),
    ]),
  ];
  const providers: Array<{ name: WebSearchProviderName; key: string }> = [];
  const problems: string[] = [];
  for (const name of order) {
    const variable = settings.keyEnv?.[name];
    if (variable === undefined) {
      problems.push(`${name} has no key variable in "webSearch.keyEnv"`);
      continue;
    }
    const key = readEnv(variable);
    if (key === undefined || key === "") {
      problems.push(`${name}'s key variable ${variable} is not set (or not readable by tern)`);
      continue;
    }
    providers.push({ name, key });
  }
  return { providers, problems };
}
