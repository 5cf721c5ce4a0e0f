/**
 * The web search providers behind one interface: each turns (query, limit, key) into one HTTP
 * request and its JSON answer into results (title, URL, snippet, date). Pure: no network here.
 */
import type { WebSearchProviderName } from "../config/types.ts";
import type { SearchResult, SearchText, WebRequest } from "./web_request.ts";

export type { SearchResult };

/** One provider. */
export interface SearchProvider {
  name: WebSearchProviderName;
  /** The API's default endpoint. */
  endpoint: string;
  /** The request for `query`, at `endpoint`, with `key`. */
  request(query: string, limit: number, key: string, endpoint: string): WebRequest;
  /**
   * The results in a parsed answer, and the provider's id for the response when it gives one.
   * @throws {TypeError} when the answer has not the provider's shape.
   */
  parse(answer: unknown): { id?: string; results: SearchResult[] };
}

const json = (key: Record<string, string>) => ({
  "content-type": "application/json",
  accept: "application/json",
  ...key,
});

export const SEARCH_PROVIDERS: Readonly<Record<WebSearchProviderName, SearchProvider>> = {
  exa: {
    name: "exa",
    endpoint: "https://api.exa.ai/search",
    request: (query, limit, key, endpoint) => ({
      url: endpoint,
      method: "POST",
      headers: json({ "x-api-key": key }),
      body: JSON.stringify({
        query,
        numResults: limit,
        contents: { highlights: { numSentences: 3 } },
      }),
    }),
    parse: (answer) => {
      const results = list(answer, "results").map((item) => ({
        title: text(item.title),
        url: text(item.url),
        snippet: text(Array.isArray(item.highlights) ? item.highlights.join(" … ") : "") ||
          text(item.summary) || text(item.text).slice(0, 500),
        ...dated(item.publishedDate),
      }));
      return { id: optional((answer as Record<string, unknown>).requestId), results };
    },
  },
  tavily: {
    name: "tavily",
    endpoint: "https://api.tavily.com/search",
    request: (query, limit, key, endpoint) => ({
      url: endpoint,
      method: "POST",
      headers: json({ authorization: `Bearer ${key}` }),
      body: JSON.stringify({ query, max_results: limit, search_depth: "basic" }),
    }),
    parse: (answer) => ({
      id: optional((answer as Record<string, unknown>).request_id),
      results: list(answer, "results").map((item) => ({
        title: text(item.title),
        url: text(item.url),
        snippet: text(item.content),
        ...dated(item.published_date),
      })),
    }),
  },
  brave: {
    name: "brave",
    endpoint: "https://api.search.brave.com/res/v1/web/search",
    request: (query, limit, key, endpoint) => {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(limit, 20)));
      return {
        url: url.href,
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": key },
      };
    },
    parse: (answer) => {
      const web = (answer as Record<string, unknown>)?.web;
      return {
        results: list(web, "results").map((item) => ({
          title: text(item.title),
          url: text(item.url),
          snippet: text(item.description).replace(/<\/?strong>/g, ""),
          ...dated(item.page_age ?? item.age),
        })),
      };
    },
  },
  perplexity: {
    name: "perplexity",
    endpoint: "https://api.perplexity.ai/search",
    request: (query, limit, key, endpoint) => ({
      url: endpoint,
      method: "POST",
      headers: json({ authorization: `Bearer ${key}` }),
      body: JSON.stringify({ query, max_results: limit }),
    }),
    parse: (answer) => ({
      id: optional((answer as Record<string, unknown>).id),
      results: list(answer, "results").map((item) => ({
        title: text(item.title),
        url: text(item.url),
        snippet: text(item.snippet),
        ...dated(item.date ?? item.last_updated),
      })),
    }),
  },
};

function list(value: unknown, key: string): Record<string, unknown>[] {
  const items = typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
  if (!Array.isArray(items)) throw new TypeError(`the answer has no "${key}" list`);
  return items.filter((item): item is Record<string, unknown> =>
    typeof item === "object" && item !== null && typeof item.url === "string"
  );
}

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

function optional(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function dated(value: unknown): { date?: string } {
  return typeof value === "string" && value !== "" ? { date: value } : {};
}

/**
 * The results of a search answer for `request.search` (the provider's name), or why it has
 * none; nothing when it asks for none or the answer is not a success (the caller says so). Run
 * by the request process: parsing 5 MiB of JSON took seconds, which in tern's process held its
 * event loop.
 */
export function searchOfAnswer(
  request: { search?: WebSearchProviderName },
  response: { status: number; body: Uint8Array },
): SearchText | undefined {
  const { search } = request;
  if (search === undefined || response.status < 200 || response.status > 299) return undefined;
  const bytes = response.body.length;
  try {
    const { id, results } = SEARCH_PROVIDERS[search].parse(answerJson(response.body));
    return { ok: true, bytes, ...(id === undefined ? {} : { id }), results };
  } catch (error) {
    return { ok: false, bytes, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A provider's answer as JSON. When it is not, the parser's message is not repeated: it quotes
 * the answer's first characters, the server's text, which would sit outside the markers.
 * @throws {TypeError} naming only the answer's size.
 */
function answerJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new TypeError(`the answer (${body.length} bytes) is not valid JSON`);
  }
}
