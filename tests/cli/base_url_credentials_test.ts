/**
 * A base URL's credentials (`http://user:password@host/v1`, `?api-key=…`) reach the server they
 * are for, and nothing else: `tern config`, `tern models` (text and JSON), the models cache in
 * tern's home and the error that refuses a bad URL show the URL without them.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { modelsCachePath } from "../../src/llm/models_cache.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const PASSWORD = "Pa55word-7f3a";
const QUERY_KEY = "SeKrit-91c2";

/** A `/v1/models` server that records the Authorization header of each request. */
function modelsServer() {
  const authorizations: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    authorizations.push(req.headers.get("authorization"));
    if (new URL(req.url).pathname !== "/v1/models") return new Response("no", { status: 404 });
    return Response.json({ data: [{ id: "listed-model-a1" }] });
  });
  return {
    port: server.addr.port,
    authorizations,
    close: () => server.shutdown(),
  };
}

function leaks(text: string): boolean {
  return text.includes(PASSWORD) || text.includes(QUERY_KEY);
}

Deno.test("tern config shows a base URL without its password or query values", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const url = `http://user:${PASSWORD}@127.0.0.1:9/v1?api-key=${QUERY_KEY}`;
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        providers: { mine: { api: "openai", baseUrl: `http://me:${PASSWORD}@127.0.0.1:9/v1` } },
      }),
    );
    const shown = await runTern(["config", "--base-url", url], { cwd: ws.dir, env });
    equal(shown.code, 0, shown.stderr);
    equal(leaks(shown.stdout + shown.stderr), false, shown.stdout);
    match(
      shown.stdout,
      /^baseUrl +http:\/\/\*\*\*@127\.0\.0\.1:9\/v1\?api-key=\*\*\* +\(--base-url/m,
    );
    match(shown.stdout, /^providers +.*"baseUrl":"http:\/\/\*\*\*@127\.0\.0\.1:9\/v1"/m);
    // A URL refused for its scheme is quoted without them too.
    const refused = await runTern(["config", "--base-url", `ftp://u:${PASSWORD}@h/v1`], {
      cwd: ws.dir,
      env,
    });
    equal(refused.code, 2);
    match(refused.stderr, /expected an http or https URL, got "ftp:\/\/\*\*\*@h\/v1"/);
    equal(leaks(refused.stderr), false, refused.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern models sends a base URL's credentials but never shows or caches them", async () => {
  const ws = await tempWorkspace();
  const server = modelsServer();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const url = `http://user:${PASSWORD}@127.0.0.1:${server.port}/v1`;
    const models = (args: string[]) =>
      runTern(["models", "--base-url", url, "-m", "listed-model-a1", ...args], {
        cwd: ws.dir,
        env,
      });
    const text = await models([]);
    equal(text.code, 0, text.stderr);
    match(text.stdout, new RegExp(`http://\\*\\*\\*@127\\.0\\.0\\.1:${server.port}/v1`));
    match(text.stdout, /listed-model-a1/);
    equal(leaks(text.stdout + text.stderr), false, text.stdout);
    // The server got them, as Basic authentication.
    equal(server.authorizations[0], `Basic ${btoa(`user:${PASSWORD}`)}`);
    const cache = await Deno.readTextFile(modelsCachePath(ws.home));
    ok(cache.includes("listed-model-a1"), cache);
    equal(leaks(cache), false, cache);
    // The cached listing is found again under the same URL, and JSON shows none of them either.
    const json = await models(["--json", "--offline"]);
    equal(json.code, 0, json.stderr);
    equal(leaks(json.stdout), false, json.stdout);
    const main = JSON.parse(json.stdout).find((listing: { main: boolean }) => listing.main);
    equal(main.baseUrl, `http://***@127.0.0.1:${server.port}/v1`);
    ok(main.cachedAt, json.stdout);
    // A key in the query is hidden the same way, also when the listing fails.
    const query = await runTern(
      ["models", "--base-url", `http://127.0.0.1:${server.port}/v1?api-key=${QUERY_KEY}`],
      { cwd: ws.dir, env },
    );
    equal(leaks(query.stdout + query.stderr), false, query.stdout + query.stderr);
    match(query.stdout, /\/v1\?api-key=\*\*\*/);
    equal(leaks(await Deno.readTextFile(modelsCachePath(ws.home))), false);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
