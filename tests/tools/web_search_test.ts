import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { WebSearchProviderName } from "../../src/config/types.ts";
import {
  resolveSearchProviders,
  webFetchOptions,
  webSearchOptions,
} from "../../src/harness/web_search.ts";
import { appendSearchCache, readSearchCache } from "../../src/tools/web_cache.ts";
import { guardedRequest } from "../../src/tools/web_request.ts";
import { createGetSearchContentTool } from "../../src/tools/get_search_content.ts";
import { createWebSearchTool, type WebSearchOptions } from "../../src/tools/web_search.ts";
import { call, failed, succeeded } from "./_helpers.ts";

const transport: WebSearchOptions["transport"] = (request) =>
  guardedRequest(request, { testAllowAddress: (address) => address === "127.0.0.1" });

/** Each provider's answer, in its own shape (as their API documentation shows it). */
const ANSWERS: Record<WebSearchProviderName, unknown> = {
  exa: {
    requestId: "exa-req-1",
    results: [{
      id: "https://deno.com/blog/v2",
      title: "Deno 2 is here",
      url: "https://deno.com/blog/v2",
      publishedDate: "2024-10-09T00:00:00.000Z",
      author: "Deno team",
      highlights: ["Deno 2 is backwards compatible with Node.", "It supports npm."],
    }],
  },
  tavily: {
    query: "deno 2",
    answer: null,
    results: [{
      title: "Deno 2.0 Release Notes",
      url: "https://docs.deno.com/runtime/",
      content: "Deno 2.0 brings npm compatibility.",
      score: 0.91,
      published_date: "2024-10-09",
    }],
    response_time: 1.2,
    request_id: "tav-1",
  },
  brave: {
    type: "search",
    query: { original: "deno 2" },
    web: {
      type: "search",
      results: [{
        title: "Deno 2 | Deno",
        url: "https://deno.com/2",
        description: "The <strong>Deno 2</strong> runtime.",
        page_age: "2024-10-09T12:00:00",
        age: "October 9, 2024",
      }],
    },
  },
  perplexity: {
    id: "pplx-1",
    results: [{
      title: "Announcing Deno 2",
      url: "https://deno.com/blog/v2.0",
      snippet: "Deno 2 is a major release.",
      date: "2024-10-09",
      last_updated: "2024-10-10",
    }],
  },
};

interface Seen {
  provider: string;
  method: string;
  headers: Headers;
  url: URL;
  body: string;
}

async function withProviders(
  fn: (endpoint: (name: WebSearchProviderName) => string, seen: Seen[]) => Promise<void>,
  status: Partial<Record<WebSearchProviderName, number>> = {},
): Promise<void> {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const provider = url.pathname.split("/")[1] as WebSearchProviderName;
    seen.push({ provider, method: req.method, headers: req.headers, url, body: await req.text() });
    const code = status[provider] ?? 200;
    if (code !== 200) return new Response('{"error":"quota"}', { status: code });
    return Response.json(ANSWERS[provider]);
  });
  try {
    await fn((name) => `http://127.0.0.1:${server.addr.port}/${name}/search`, seen);
  } finally {
    await server.shutdown();
  }
}

function options(
  names: WebSearchProviderName[],
  endpoint: (name: WebSearchProviderName) => string,
  cacheFile?: string,
): WebSearchOptions {
  return {
    providers: names.map((name) => ({
      name,
      key: `key-${name}-0123456789`,
      endpoint: endpoint(name),
    })),
    transport,
    cacheFile,
  };
}

Deno.test("web_search() sends each provider its own request and reads its answer's shape", async () => {
  await withProviders(async (endpoint, seen) => {
    const expect: Record<WebSearchProviderName, RegExp> = {
      exa:
        /1\. Deno 2 is here\n {3}https:\/\/deno\.com\/blog\/v2\n {3}2024-10-09T00:00:00\.000Z\n {3}Deno 2 is backwards compatible with Node\. … It supports npm\./,
      tavily:
        /1\. Deno 2\.0 Release Notes\n {3}https:\/\/docs\.deno\.com\/runtime\/\n {3}2024-10-09\n {3}Deno 2\.0 brings npm compatibility\./,
      brave:
        /1\. Deno 2 \| Deno\n {3}https:\/\/deno\.com\/2\n {3}2024-10-09T12:00:00\n {3}The Deno 2 runtime\./,
      perplexity:
        /1\. Announcing Deno 2\n {3}https:\/\/deno\.com\/blog\/v2\.0\n {3}2024-10-09\n {3}Deno 2 is a major release\./,
    };
    for (const name of ["exa", "tavily", "brave", "perplexity"] as const) {
      const tool = createWebSearchTool(options([name], endpoint));
      const out = succeeded(await call(tool, "/", { query: "deno 2", limit: 3 }));
      match(out, expect[name]);
      match(
        out,
        new RegExp(`Search "deno 2" via ${name}\\nResponse id: ${name}-[0-9a-f]{8}, 1 results`),
      );
      match(out, /--- BEGIN UNTRUSTED WEB CONTENT [0-9a-f]{8} ---/);
    }
    const [exa, tavily, brave, perplexity] = seen;
    equal(exa.headers.get("x-api-key"), "key-exa-0123456789");
    deepEqual(JSON.parse(exa.body).numResults, 3);
    equal(JSON.parse(exa.body).query, "deno 2");
    equal(tavily.headers.get("authorization"), "Bearer key-tavily-0123456789");
    deepEqual(JSON.parse(tavily.body).max_results, 3);
    equal(brave.method, "GET");
    equal(brave.headers.get("x-subscription-token"), "key-brave-0123456789");
    equal(brave.url.searchParams.get("q"), "deno 2");
    equal(brave.url.searchParams.get("count"), "3");
    equal(perplexity.headers.get("authorization"), "Bearer key-perplexity-0123456789");
    deepEqual(JSON.parse(perplexity.body), { query: "deno 2", max_results: 3 });
  });
});

Deno.test("web_search() falls back in order when a provider fails, and never shows its key", async () => {
  await withProviders(async (endpoint, seen) => {
    const tool = createWebSearchTool(options(["brave", "tavily", "exa"], endpoint));
    const out = succeeded(await call(tool, "/", { query: "deno" }));
    match(out, /Search "deno" via tavily \(after brave: HTTP 429\)/);
    deepEqual(seen.map((s) => s.provider), ["brave", "tavily"]);
    const all = createWebSearchTool(options(["brave"], endpoint));
    const message = failed(await call(all, "/", { query: "deno" }), "EXECUTION_FAILED");
    match(message, /every provider failed \(brave: HTTP 429\)/);
    ok(!message.includes("key-brave"));
  }, { brave: 429 });
});

Deno.test("web_search() and its network access say clearly when no provider is configured", async () => {
  const tool = createWebSearchTool({
    problems: ["tavily's key variable TERN_TAVILY_KEY is not set"],
  });
  equal(await tool.network!({ query: "x" }), undefined);
  match(
    failed(await call(tool, "/", { query: "x" }), "EXECUTION_FAILED"),
    /no search provider is configured \(tavily's key variable TERN_TAVILY_KEY is not set\); set "webSearch"/,
  );
  const configured = createWebSearchTool({
    providers: [{ name: "tavily", key: "k" }, { name: "exa", key: "k" }],
  });
  deepEqual(await configured.network!({ query: "deno docs" }), {
    host: "api.tavily.com,api.exa.ai",
    what: 'search "deno docs" via tavily (fallback exa)',
  });
  // A query with escapes is shown decoded too: what a provider that decodes it reads.
  deepEqual(await configured.network!({ query: "k %73k-%41B%0aC" }), {
    host: "api.tavily.com,api.exa.ai",
    what: 'search "k %73k-%41B%0aC" (decoded: "k sk-AB\u240aC") via tavily (fallback exa)',
  });
});

Deno.test("get_search_content() reads back by responseId, url, urlIndex, query and queryIndex", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cacheFile = join(dir, "web", "ws.jsonl");
    await withProviders(async (endpoint) => {
      const opts = options(["tavily"], endpoint, cacheFile);
      const search = createWebSearchTool(opts);
      const read = createGetSearchContentTool(opts);
      const first = succeeded(await call(search, "/", { query: "first query" }));
      const id = /Response id: (tavily-[0-9a-f]{8})/.exec(first)![1];
      match(first, new RegExp(`get_search_content\\(\\{"responseId": "${id}"\\}\\) reads it back`));
      succeeded(await call(search, "/", { query: "second query" }));
      const byId = succeeded(await call(read, "/", { responseId: id }));
      match(byId, /Cached search "first query" via tavily/);
      match(byId, /1\. Deno 2\.0 Release Notes/);
      match(succeeded(await call(read, "/", { query: "second query" })), /"second query"/);
      match(succeeded(await call(read, "/", { queryIndex: 1 })), /"first query"/);
      match(
        succeeded(await call(read, "/", { url: "https://docs.deno.com/runtime/" })),
        /"second query".*\n[\s\S]*https:\/\/docs\.deno\.com\/runtime\//,
      );
      match(succeeded(await call(read, "/", { urlIndex: 1, responseId: id })), /"first query"/);
      match(
        failed(await call(read, "/", { urlIndex: 4 }), "NOT_FOUND"),
        /has 1 results \(the cache holds 2 searches; latest: 1: tavily-\w+ "first query"; 2:/,
      );
      match(
        failed(await call(read, "/", { responseId: "nope" }), "NOT_FOUND"),
        /no response "nope"/,
      );
      match(failed(await call(read, "/", {}), "INVALID_ARGUMENTS"), /give responseId/);
      equal((await Deno.stat(cacheFile)).mode! & 0o777, 0o600);
    });
    const disabled = createGetSearchContentTool({ providers: [] });
    match(
      failed(await call(disabled, "/", { queryIndex: 1 }), "EXECUTION_FAILED"),
      /the cache is disabled/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("appendSearchCache() keeps the file under its bound by dropping the oldest responses", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "cache.jsonl");
    const result = { title: "t", url: "https://example.com/", snippet: "s".repeat(200) };
    for (let i = 0; i < 20; i++) {
      await appendSearchCache(path, {
        id: `r${i}`,
        time: "2026-12-02T00:00:00Z",
        provider: "exa",
        query: `q${i}`,
        results: [result],
      }, 2_000);
    }
    ok((await Deno.stat(path)).size <= 2_000);
    const kept = await readSearchCache(path, 2_000);
    equal(kept.at(-1)!.id, "r19");
    ok(kept.length < 20 && kept.length > 1);
    // Lines that are not responses (a torn line, a foreign shape) are skipped.
    await Deno.writeTextFile(path, '{"id":1}\n{"torn', { append: true });
    deepEqual((await readSearchCache(path, 2_000)).map((e) => e.id), kept.map((e) => e.id));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolveSearchProviders() orders default then fallbacks and names what is missing", () => {
  const env: Record<string, string> = { TERN_EXA: "e", TERN_BRAVE: "b" };
  const { providers, problems } = resolveSearchProviders({
    provider: "tavily",
    fallback: ["brave", "exa", "brave", "perplexity"],
    keyEnv: { tavily: "TERN_TAVILY", brave: "TERN_BRAVE", exa: "TERN_EXA" },
  }, (name) => env[name]);
  deepEqual(providers, [{ name: "brave", key: "b" }, { name: "exa", key: "e" }]);
  deepEqual(problems, [
    "tavily's key variable TERN_TAVILY is not set (or not readable by tern)",
    'perplexity has no key variable in "webSearch.keyEnv"',
  ]);
  const off = webSearchOptions({ cache: false }, { ternHome: "/h", workspace: "/w" }, () => "");
  equal(off.cacheFile, undefined);
  const on = webSearchOptions({}, { ternHome: "/h", workspace: "/w" }, () => "");
  match(on.cacheFile!, /^\/h\/web\/.+\.jsonl$/);
  deepEqual(webFetchOptions({}), {});
  deepEqual(
    webFetchOptions(
      { reader: "https://r.jina.ai/", readerKeyEnv: "TERN_JINA" },
      (name) => name === "TERN_JINA" ? "jina-key" : undefined,
    ),
    { reader: { base: "https://r.jina.ai/", key: "jina-key" } },
  );
});
