/**
 * End-to-end: the discovered-model cache through the real `tern models` process against a
 * scripted `GET /models` server: cached in tern's home with a TTL, listed offline, unknown
 * models marked guessed, a hostile answer's escapes and size refused.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { backgroundServices } from "../../src/cli/interactive/background.ts";
import { loadConfig } from "../../src/config/mod.ts";
import { modelsCachePath } from "../../src/llm/models_cache.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** A `/v1/models` server answering `answer()`; counts the requests. */
function modelsServer(answer: () => string) {
  const seen = { requests: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname !== "/v1/models") return new Response("no", { status: 404 });
    seen.requests++;
    return new Response(answer(), { headers: { "content-type": "application/json" } });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    seen,
    close: () => server.shutdown(),
  };
}

interface Listing {
  main: boolean;
  error?: string;
  cachedAt?: string;
  models: {
    id: string;
    source: string;
    guessed?: boolean;
    contextWindow: number;
    price?: unknown;
  }[];
}

const HOSTILE_ID = "evil\x1b]0;owned\x07\x1b[2J";

Deno.test("tern models caches the server's list in tern's home and lists it offline", async () => {
  const ws = await tempWorkspace();
  const answer = JSON.stringify({
    data: [
      { id: "brand-new-model" },
      { id: "gpt-4.1" },
      { id: "served-with-window", max_model_len: 65_536 },
      { id: HOSTILE_ID },
      { id: "x".repeat(300) },
      { id: "two words" },
    ],
  });
  const server = modelsServer(() => answer);
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, OPENAI_API_KEY: "sk-test" };
    const models = (args: string[]) =>
      runTern(["models", "--provider", "openai", "--base-url", server.baseUrl, ...args], {
        cwd: ws.dir,
        env,
      });
    const mainOf = (stdout: string): Listing => JSON.parse(stdout).find((l: Listing) => l.main);

    const first = await models(["--json"]);
    equal(first.code, 0, first.stderr);
    equal(server.seen.requests, 1);
    const listed = mainOf(first.stdout);
    equal(listed.error, undefined);
    equal(listed.cachedAt, undefined);
    const byId = new Map(listed.models.map((m) => [m.id, m]));
    deepEqual(
      [byId.get("brand-new-model")?.source, byId.get("brand-new-model")?.guessed],
      ["discovered", true],
    );
    equal(byId.get("served-with-window")?.guessed, undefined);
    equal(byId.get("served-with-window")?.contextWindow, 65_536);
    // A listed id the catalog knows keeps the catalog's data, not a guess.
    equal(byId.get("gpt-4.1")?.guessed, undefined);
    // Escapes, whitespace and overlong ids never get in.
    ok(
      ![...byId.keys()].some((id) => id.startsWith("evil") || id.length > 256 || id.includes(" ")),
    );
    // The cache is in tern's home, the workspace untouched.
    const cached = JSON.parse(await Deno.readTextFile(modelsCachePath(ws.home)));
    ok(cached.listings[0].models.some((m: { id: string }) => m.id === "brand-new-model"));
    equal((await Deno.stat(modelsCachePath(ws.home))).mode! & 0o777, 0o600);
    deepEqual([...Deno.readDirSync(ws.dir)].map((e) => e.name).filter((n) => n !== ".git"), []);

    // Within the TTL the cache answers: no second request.
    const again = await models(["--json"]);
    equal(again.code, 0, again.stderr);
    equal(server.seen.requests, 1);
    ok(mainOf(again.stdout).cachedAt, again.stdout);
    ok(mainOf(again.stdout).models.some((m) => m.id === "brand-new-model"));

    // Offline, and with the server gone: still listed, marked guessed in the text.
    await server.close();
    const offline = await models(["--offline"]);
    equal(offline.code, 0, offline.stderr);
    match(offline.stdout, /brand-new-model .*discovered \(guessed\)/);
    match(offline.stdout, /the server's models as listed at .* \(cached\)/);
    ok(!offline.stdout.includes("\x1b"), "no escape reached the terminal");

    // The /model picker offers the cached models without asking any server.
    const { config } = await loadConfig({
      cwd: ws.dir,
      flags: { provider: "openai", baseUrl: server.baseUrl },
      env,
    });
    const offered = await backgroundServices({ workspace: ws.dir, config: { ternHome: ws.home } })
      .models(
        config,
      );
    const offeredNew = offered.find((m) => m.model === "brand-new-model");
    ok(offeredNew, JSON.stringify(offered.map((m) => m.model)));
    match(offeredNew.detail, /guessed/);
  } finally {
    await server.close().catch(() => {});
    await ws.cleanup();
  }
});

Deno.test("tern models refuses a huge /models answer and caches nothing", async () => {
  const ws = await tempWorkspace();
  const huge = JSON.stringify({
    data: Array.from({ length: 200_000 }, (_, i) => ({ id: `model-${i}`, pad: "y".repeat(40) })),
  });
  const server = modelsServer(() => huge);
  try {
    const run = await runTern(
      ["models", "--provider", "openai", "--base-url", server.baseUrl, "--json"],
      { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, OPENAI_API_KEY: "sk-test" } },
    );
    equal(run.code, 0, run.stderr);
    const main: Listing = JSON.parse(run.stdout).find((l: Listing) => l.main);
    match(main.error ?? "", /answer larger than \d+ bytes/);
    ok(!main.models.some((m) => m.id.startsWith("model-")));
    await Deno.stat(modelsCachePath(ws.home)).then(
      () => ok(false, "a cache file was written"),
      (error) => ok(error instanceof Deno.errors.NotFound),
    );
  } finally {
    await server.close();
    await ws.cleanup();
  }
});

Deno.test("tern models: a tampered cache file loses its bad entries, not the good ones", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.home, "cache"), { recursive: true });
    const good = {
      provider: "openai",
      id: "kept-model",
      contextWindow: 100_000,
      maxOutputTokens: 4_000,
      images: false,
      tools: true,
      source: "discovered",
    };
    await Deno.writeTextFile(
      modelsCachePath(ws.home),
      JSON.stringify({
        version: 1,
        listings: [{
          provider: "openai",
          baseUrl: "https://api.openai.com/v1",
          listedAt: 0,
          models: [
            good,
            { ...good, id: HOSTILE_ID },
            { ...good, id: "bad-window", contextWindow: -1 },
            { ...good, id: "other-provider", provider: "anthropic" },
            { ...good, id: "priced", price: { input: 3, output: 15, cachedInput: 1e6 } },
            { ...good, id: "over-cap", price: { input: 1e300, output: 15 } },
          ],
        }],
      }),
    );
    const run = await runTern(["models", "--offline", "--provider", "openai", "--json"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, OPENAI_API_KEY: "sk-test" },
    });
    equal(run.code, 0, run.stderr);
    const main: Listing = JSON.parse(run.stdout).find((l: Listing) => l.main);
    const ids = main.models.map((m) => m.id);
    ok(ids.includes("kept-model"), JSON.stringify(ids));
    for (const bad of ["bad-window", "other-provider"]) ok(!ids.includes(bad), bad);
    ok(!ids.some((id) => id.startsWith("evil")));
    // A price past the cap a server's answer is held to (an older tern cached one) is dropped:
    // the model stays, without that price.
    const price = (id: string) => main.models.find((m) => m.id === id)?.price;
    equal(JSON.stringify(price("priced")), JSON.stringify({ input: 3, output: 15 }));
    ok(ids.includes("over-cap"), JSON.stringify(ids));
    equal(price("over-cap"), undefined);
  } finally {
    await ws.cleanup();
  }
});
