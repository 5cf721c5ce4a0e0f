/**
 * The bodies of web_search and get_search_content: the providers asked in order through the
 * web transport (each request through the address guard, in a network-only process), the
 * first that answers wins; the response is cached and shown as untrusted data.
 */
import type { WebSearchProviderName } from "../config/types.ts";
import { ToolError } from "../core/observation.ts";
import type { ToolContext, ToolOutput } from "./define.ts";
import { appendSearchCache, type CachedSearch, readSearchCache } from "./web_cache.ts";
import { untrusted } from "./web_fetch_run.ts";
import { WebRequestError } from "./web_request.ts";
import { SEARCH_PROVIDERS, searchOfAnswer, type SearchResult } from "./web_search_providers.ts";
import { processTransport, type WebTransport } from "./web_transport.ts";

/** What web_search may use, resolved from the person's config. */
export interface WebSearchOptions {
  /** The providers with a key, in the order asked (default first, then the fallbacks). */
  providers?: Array<{ name: WebSearchProviderName; key: string; endpoint?: string }>;
  /** Why providers named in the config are missing (an unset key variable), for the error. */
  problems?: string[];
  /** The cache file; undefined when the cache is disabled. */
  cacheFile?: string;
  /** How requests reach the network; default a network-only process per request. */
  transport?: WebTransport;
}

const CONFIGURE = 'set "webSearch": {"provider": "tavily", "keyEnv": {"tavily": ' +
  '"TERN_TAVILY_KEY"}} in ~/.tern/config.jsonc (providers: exa, tavily, brave, perplexity)';

let defaultTransport: WebTransport | undefined;

/** Runs one web_search call. */
export async function searchForModel(
  args: { query: string; limit?: number },
  ctx: ToolContext,
  options: WebSearchOptions = {},
): Promise<ToolOutput> {
  const providers = options.providers ?? [];
  if (providers.length === 0) {
    const why = options.problems?.length ? ` (${options.problems.join("; ")})` : "";
    throw new ToolError(
      "EXECUTION_FAILED",
      `Cannot search the web: no search provider is configured${why}; ${CONFIGURE}`,
    );
  }
  const transport = options.transport ?? (defaultTransport ??= processTransport());
  const limit = args.limit ?? 5;
  const failures: string[] = [];
  for (const { name, key, endpoint } of providers) {
    const provider = SEARCH_PROVIDERS[name];
    const started = performance.now();
    const request = provider.request(args.query, limit, key, endpoint ?? provider.endpoint);
    let parsed: { id?: string; results: SearchResult[] };
    let status: number;
    let bytes: number;
    try {
      const response = await transport({
        ...request,
        // The person allowed the provider's host: a redirect elsewhere would carry the query
        // to a host nobody allowed, so it is not followed (the provider has failed).
        sameHostRedirects: true,
        search: name,
        signal: ctx.signal,
        timeoutMs: 30_000,
      });
      status = response.status;
      bytes = response.body.length;
      if (status < 200 || status > 299) {
        failures.push(`${name}: HTTP ${status}`);
        continue;
      }
      // The request process read the answer; only a transport in this process (tests) leaves
      // it to be read here.
      const read = response.search ?? searchOfAnswer({ search: name }, response)!;
      bytes = read.bytes;
      if (!read.ok) throw new TypeError(read.message);
      parsed = read;
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      const detail = error instanceof WebRequestError || error instanceof Error
        ? error.message
        : String(error);
      failures.push(`${name}: ${detail.replaceAll(key, "***")}`);
      continue;
    }
    const entry: CachedSearch = {
      id: `${name}-${crypto.randomUUID().slice(0, 8)}`,
      time: new Date().toISOString(),
      provider: name,
      query: args.query,
      results: parsed.results.slice(0, limit),
    };
    let cached = "";
    if (options.cacheFile !== undefined) {
      try {
        await appendSearchCache(options.cacheFile, entry);
        cached = `; get_search_content({"responseId": "${entry.id}"}) reads it back`;
      } catch (error) {
        cached = `; not cached (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    const ms = Math.round(performance.now() - started);
    const facts = [
      `Search ${JSON.stringify(args.query)} via ${name}` +
      (failures.length > 0 ? ` (after ${failures.join("; ")})` : ""),
      `Response id: ${entry.id}, ${entry.results.length} results${cached}`,
    ];
    return {
      output: untrusted(formatResults(entry.results), { url: request.url, facts }),
      details: { kind: "web", url: request.url, status, bytes, ms },
    };
  }
  throw new ToolError(
    "EXECUTION_FAILED",
    `Cannot search the web: every provider failed (${failures.join("; ")})`,
  );
}

/** Runs one get_search_content call. */
export async function readCachedForModel(
  args: {
    responseId?: string;
    url?: string;
    urlIndex?: number;
    query?: string;
    queryIndex?: number;
  },
  options: WebSearchOptions,
): Promise<ToolOutput> {
  if (options.cacheFile === undefined) {
    throw new ToolError(
      "EXECUTION_FAILED",
      'Cannot read cached search results: the cache is disabled ("webSearch": {"cache": ' +
        "false}, or no search provider is configured); search again with web_search",
    );
  }
  const given = Object.entries(args).filter(([, value]) => value !== undefined).map(([k]) => k);
  if (given.length === 0) {
    throw new ToolError(
      "INVALID_ARGUMENTS",
      "Cannot read cached search results: give responseId, url, urlIndex, query or queryIndex",
    );
  }
  const cache = await readSearchCache(options.cacheFile);
  if (cache.length === 0) {
    throw new ToolError("NOT_FOUND", "Cannot read cached search results: the cache is empty");
  }
  let response: CachedSearch | undefined;
  if (args.responseId !== undefined) {
    response = cache.find((entry) => entry.id === args.responseId);
    if (!response) notFound(`no response "${args.responseId}"`, cache);
  } else if (args.query !== undefined) {
    response = cache.findLast((entry) => entry.query === args.query);
    if (!response) notFound(`no search for ${JSON.stringify(args.query)}`, cache);
  } else if (args.queryIndex !== undefined) {
    response = cache[args.queryIndex - 1];
    if (!response) notFound(`no search number ${args.queryIndex}`, cache);
  }
  let results: SearchResult[];
  if (args.url !== undefined) {
    const within = response ? [response] : [...cache].reverse();
    const hit = within.flatMap((entry) => entry.results.map((result) => ({ entry, result })))
      .find(({ result }) => result.url === args.url);
    if (!hit) notFound(`no result with the URL "${args.url}"`, cache);
    response = hit!.entry;
    results = [hit!.result];
  } else if (args.urlIndex !== undefined) {
    response ??= cache.at(-1)!;
    const result = response.results[args.urlIndex - 1];
    if (!result) {
      notFound(`response "${response.id}" has ${response.results.length} results`, cache);
    }
    results = [result];
  } else {
    results = response!.results;
  }
  const facts = [
    `Cached search ${JSON.stringify(response!.query)} via ${response!.provider} at ` +
    `${response!.time}, response id ${response!.id}`,
  ];
  return {
    output: untrusted(formatResults(results), { url: `(cache) ${response!.id}`, facts }),
  };
}

function notFound(what: string, cache: readonly CachedSearch[]): never {
  const recent = cache.slice(-5).map((entry, i) =>
    `${cache.length - Math.min(5, cache.length) + i + 1}: ${entry.id} ${
      JSON.stringify(entry.query)
    }`
  ).join("; ");
  throw new ToolError(
    "NOT_FOUND",
    `Cannot read cached search results: ${what} (the cache holds ${cache.length} searches; ` +
      `latest: ${recent})`,
  );
}

/** Results as numbered blocks: title, URL, date, snippet. */
export function formatResults(results: readonly SearchResult[]): string {
  if (results.length === 0) return "(no results)";
  return results.map((result, i) =>
    [
      `${i + 1}. ${result.title || "(no title)"}`,
      `   ${result.url}`,
      ...(result.date ? [`   ${result.date}`] : []),
      ...(result.snippet ? [`   ${result.snippet.replace(/\s+/g, " ")}`] : []),
    ].join("\n")
  ).join("\n\n");
}
