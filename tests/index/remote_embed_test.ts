/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint: a scripted server on 127.0.0.1
 * records each request and answers with vectors made from the text, so the tests see batching,
 * the cache by hash, the key, and failures.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { embedTexts } from "../../src/index/remote_embed.ts";
import { IndexStore } from "../../src/index/store.ts";
import { indexWorkspace, queryVectorOf } from "../../src/harness/code_index.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { tempIndex } from "./_fixtures.ts";

interface Seen {
  authorization: string | null;
  model: string;
  input: string[];
}

/** A vector that says which marker word a text holds: [alpha, beta, gamma, 1]. */
function vectorOf(text: string): number[] {
  return [
    /alpha/i.test(text) ? 1 : 0,
    /beta/i.test(text) ? 1 : 0,
    /gamma/i.test(text) ? 1 : 0,
    0.1,
  ];
}

async function withEndpoint(
  body: (baseUrl: string, seen: Seen[]) => Promise<void>,
  status = 200,
): Promise<void> {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const json = await req.json() as { model: string; input: string[] };
    seen.push({ authorization: req.headers.get("authorization"), ...json });
    if (new URL(req.url).pathname !== "/v1/embeddings") return new Response("no", { status: 404 });
    if (status !== 200) return new Response('{"error":"bad key"}', { status });
    // Answers out of order, as the API allows: each item says its index.
    const data = json.input.map((text, index) => ({ index, embedding: vectorOf(text) })).reverse();
    return Response.json({ data, model: json.model });
  });
  try {
    await body(`http://127.0.0.1:${server.addr.port}/v1`, seen);
  } finally {
    await server.shutdown();
  }
}

Deno.test("embedTexts() sends texts in batches with the key and keeps each vector in its place", async () => {
  await withEndpoint(async (baseUrl, seen) => {
    const endpoint = { baseUrl, model: "emb-1", apiKey: "k-123", batchSize: 2 };
    const texts = ["alpha one", "beta two", "gamma three", "alpha one", "plain"];
    const vectors = await embedTexts(endpoint, texts);
    deepEqual(
      vectors.map((vector) => Array.from(vector)),
      texts.map(vectorOf).map((v) => Array.from(Float32Array.from(v))),
    );
    // Four distinct texts, two a request.
    deepEqual(seen.map((request) => request.input.length), [2, 2]);
    ok(seen.every((request) => request.authorization === "Bearer k-123"));
    ok(seen.every((request) => request.model === "emb-1"));
  });
});

Deno.test("embedTexts() with the index's cache asks only for texts it has not seen", async () => {
  await withEndpoint(async (baseUrl, seen) => {
    const { dir, file } = tempIndex();
    const { store } = IndexStore.open(file);
    try {
      const endpoint = { baseUrl, model: "emb-1" };
      await embedTexts(endpoint, ["alpha", "beta"], store);
      await embedTexts(endpoint, ["beta", "gamma"], store);
      deepEqual(seen.map((request) => request.input), [["alpha", "beta"], ["gamma"]]);
      // Another model is another cache entry.
      await embedTexts({ baseUrl, model: "emb-2" }, ["alpha"], store);
      equal(seen.length, 3);
    } finally {
      store.close();
      Deno.removeSync(dir, { recursive: true });
    }
  });
});

Deno.test("embedTexts() names the endpoint and the status on failure, never the key", async () => {
  await withEndpoint(async (baseUrl) => {
    await rejects(
      embedTexts({ baseUrl, model: "emb-1", apiKey: "k-secret" }, ["alpha"]),
      (error: Error) => {
        match(
          error.message,
          /^Cannot compute embeddings at "http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings": HTTP 401/,
        );
        ok(!error.message.includes("k-secret"));
        return true;
      },
    );
  }, 401);
});

Deno.test("indexWorkspace() with an endpoint stores its vectors and re-sends only changed chunks", async () => {
  await withEndpoint(async (baseUrl, seen) => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-remote-embed-" }));
    const workspace = join(root, "ws");
    const file = join(root, "home", "index.sqlite");
    await Deno.mkdir(workspace);
    await Deno.writeTextFile(join(workspace, "a.ts"), "export function alphaThing() {}\n");
    await Deno.writeTextFile(join(workspace, "b.ts"), "export function betaThing() {}\n");
    try {
      const embeddings = { baseUrl, model: "emb-1", batchSize: 8 };
      await indexWorkspace(workspace, file, { embeddings });
      const first = seen.flatMap((request) => request.input).length;
      equal(first, 4, "two files, each a FILE and a FUNCTION chunk");
      const { store } = IndexStore.open(file);
      try {
        // Ranked by the endpoint's vectors: the query's vector points at "beta" only.
        const hits = store.search("thing", {
          queryVector: Float32Array.from([0, 1, 0, 0]),
          weights: {
            bm25: 0,
            vector: 1,
            exactSymbol: 0,
            symbolWords: 0,
            vectorFloor: 0,
            kind: { FUNCTION: 0, METHOD: 0, CLASS: 0, INTERFACE: 0, FILE: 0, WINDOW: 0 },
          },
        });
        equal(hits[0].chunk.path, "b.ts");
      } finally {
        store.close();
      }
      await Deno.writeTextFile(
        join(workspace, "b.ts"),
        "export function betaThing() {}\nexport function gammaThing() {}\n",
      );
      await indexWorkspace(workspace, file, { embeddings });
      const sent = seen.flatMap((request) => request.input).slice(first);
      // The changed file's FILE chunk and its new function; betaThing's text is cached.
      equal(sent.length, 2);
      ok(sent.some((text) => text.startsWith("gammaThing")));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
});

Deno.test("tern index and tern search use the endpoint of the person's config, with its key variable", async () => {
  await withEndpoint(async (baseUrl, seen) => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeTextFile(join(ws.dir, "a.ts"), "export function alphaThing() {}\n");
      await Deno.writeTextFile(
        join(ws.home, "config.jsonc"),
        JSON.stringify({
          indexEmbeddings: { baseUrl, model: "emb-1", apiKeyEnv: "TERN_EMBED_KEY" },
        }),
      );
      const env = { TERN_HOME: ws.home, TERN_EMBED_KEY: "k-777" };
      const indexed = await runTern(["index"], { cwd: ws.dir, env });
      equal(indexed.code, 0, indexed.stderr);
      equal(seen.flatMap((request) => request.input).length, 2);
      const found = await runTern(["search", "alpha", "--json"], { cwd: ws.dir, env });
      equal(found.code, 0, found.stderr);
      equal(seen.length, 2, "one request for the chunks, one for the query");
      deepEqual(seen[1].input, ["alpha"]);
      ok(seen.every((request) => request.authorization === "Bearer k-777"));
      equal((JSON.parse(found.stdout) as { symbol: string }[])[0].symbol, "alphaThing");

      // A repository's own config may not send its reader's code to a server.
      await Deno.remove(join(ws.home, "config.jsonc"));
      await Deno.mkdir(join(ws.dir, ".tern"));
      await Deno.writeTextFile(
        join(ws.dir, ".tern", "config.jsonc"),
        JSON.stringify({ indexEmbeddings: { baseUrl, model: "emb-1" } }),
      );
      const refused = await runTern(["index"], { cwd: ws.dir, env });
      ok(refused.code !== 0 || !refused.stderr.includes("Cannot compute"));
      match(refused.stderr, /indexEmbeddings/);
      equal(seen.length, 2, "nothing sent on the project's say-so");
    } finally {
      await ws.cleanup();
    }
  });
});

Deno.test("indexWorkspace() re-indexes everything when the embedding changes, and a query of the other one gets no vector", async () => {
  await withEndpoint(async (baseUrl, seen) => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-embed-switch-" }));
    const workspace = join(root, "ws");
    const file = join(root, "home", "index.sqlite");
    await Deno.mkdir(workspace);
    await Deno.writeTextFile(join(workspace, "a.ts"), "export function alphaThing() {}\n");
    try {
      const embeddings = { baseUrl, model: "emb-1" };
      equal((await indexWorkspace(workspace, file)).indexed, 1);
      // Same files, another embedding: the local vectors must not stay beside the endpoint's.
      const switched = await indexWorkspace(workspace, file, { embeddings });
      deepEqual([switched.indexed, switched.unchanged], [1, 0]);
      equal(seen.length, 1);
      equal((await indexWorkspace(workspace, file, { embeddings })).unchanged, 1);
      const { store } = IndexStore.open(file);
      try {
        // The index holds the endpoint's vectors: a local query vector would compare nothing.
        equal((await queryVectorOf(undefined, store, "alpha"))?.length, 0);
        equal((await queryVectorOf(embeddings, store, "alpha"))?.length, 4);
      } finally {
        store.close();
      }
      // And back: re-indexed with the local embedding.
      equal((await indexWorkspace(workspace, file)).indexed, 1);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
});

Deno.test("embedTexts() failures show the endpoint without its URL credentials and mask the answer", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    // An endpoint that echoes what it got: the URL, the Basic credentials and a key-like value.
    const echoed = `${req.url} ${
      req.headers.get("authorization")
    } sk-live-0123456789abcdefghijklmnop`;
    return Response.json({ error: { message: `bad request ${echoed}` } }, { status: 400 });
  });
  const port = server.addr.port;
  try {
    const baseUrl = `http://alice:pw-secret-1@127.0.0.1:${port}/v1?api-key=q-secret-2`;
    await rejects(embedTexts({ baseUrl, model: "emb-1" }, ["alpha"]), (error: Error) => {
      match(error.message, /^Cannot compute embeddings at "http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1/);
      match(error.message, /HTTP 400: bad request/);
      for (const secret of ["pw-secret-1", "q-secret-2", "alice", "0123456789abcdefghij"]) {
        ok(!error.message.includes(secret), `${secret} in ${error.message}`);
      }
      return true;
    });
  } finally {
    await server.shutdown();
  }
  // Nothing listens there now: fetch's own error names the URL, credentials and all.
  const baseUrl = `http://alice:pw-secret-1@127.0.0.1:${port}/v1`;
  await rejects(embedTexts({ baseUrl, model: "emb-1" }, ["alpha"]), (error: Error) => {
    match(error.message, /^Cannot compute embeddings at "http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1/);
    ok(!error.message.includes("pw-secret-1"), error.message);
    ok(!error.message.includes("alice"), error.message);
    return true;
  });
});

Deno.test("embedTexts() does not quote an answer that is not a JSON error", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("<html>proxy says: Bearer k-secret-value-xyz</html>", { status: 502 }),
  );
  try {
    const baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
    await rejects(embedTexts({ baseUrl, model: "emb-1" }, ["alpha"]), (error: Error) => {
      match(error.message, /HTTP 502$/);
      ok(!error.message.includes("k-secret"), error.message);
      return true;
    });
  } finally {
    await server.shutdown();
  }
});
