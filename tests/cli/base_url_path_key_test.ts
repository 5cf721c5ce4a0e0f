/**
 * A key in a base URL's path (`https://host/v1/sk-…/`, a gateway's `/<token>/openai`) reaches
 * the server it is for, and is shown nowhere: not by `tern config` (the base URL, a provider's
 * URL, a run's notice), not by `tern models` (text and JSON, and the error of a listing whose
 * server echoes the path), not in the error that refuses the URL.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { projectModelNotice } from "../../src/config/mod.ts";
import { shownUrl } from "../../src/core/url_text.ts";

const PREFIXED = "sk-proj-4fQ9zX2mL7pR1tV8";
const TOKEN = "Zq8v3Lr5Nw2Kp7Xt9Ym4Hb6Jc1Fd0Gs";

function leaks(text: string): boolean {
  return text.includes(PREFIXED) || text.includes(TOKEN) ||
    text.includes(encodeURIComponent(`Bearer ${TOKEN}`));
}

Deno.test("shownUrl() hides a path segment that reads as a key, and keeps the others", () => {
  equal(shownUrl(`https://gw.test/v1/${PREFIXED}/`), "https://gw.test/v1/***/");
  equal(shownUrl(`https://gw.test/${TOKEN}/openai/v1`), "https://gw.test/***/openai/v1");
  // Percent-encoded, or among other words in the segment.
  equal(shownUrl(`https://gw.test/k/Bearer%20${TOKEN}/v1`), "https://gw.test/k/***/v1");
  equal(shownUrl(`https://gw.test/key=${PREFIXED}/v1`), "https://gw.test/***/v1");
  // With the parts `shownUrl` hides, and in a text that is no URL.
  equal(shownUrl(`https://u:p@gw.test/${TOKEN}?k=v`), "https://***@gw.test/***?k=***");
  equal(shownUrl(`ftp://gw.test:99999/${TOKEN}`), "ftp://gw.test:99999/***");
  // Ordinary paths stay as they are.
  for (
    const url of [
      "https://api.openai.com/v1",
      "https://x.openai.azure.com/openai/deployments/gpt-4o-mini",
      "http://127.0.0.1:8080/v1/",
      "https://openrouter.ai/api/v1",
    ]
  ) equal(shownUrl(url), url);
});

Deno.test("tern config shows a base URL from a project's file without the key in its path", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(
      join(ws.dir, ".tern", "config.jsonc"),
      JSON.stringify({ baseUrl: `http://127.0.0.1:9/v1/${PREFIXED}/x/${TOKEN}` }),
    );
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        providers: { mine: { api: "openai", baseUrl: `http://127.0.0.1:9/${TOKEN}/v1` } },
      }),
    );
    const shown = await runTern(["config"], { cwd: ws.dir, env });
    equal(shown.code, 0, shown.stderr);
    equal(leaks(shown.stdout + shown.stderr), false, shown.stdout);
    match(shown.stdout, /^baseUrl +http:\/\/127\.0\.0\.1:9\/v1\/\*\*\*\/x\/\*\*\* +\(project/m);
    match(shown.stdout, /^providers +.*"baseUrl":"http:\/\/127\.0\.0\.1:9\/\*\*\*\/v1"/m);

    // A URL refused for its scheme is quoted without it too.
    const refused = await runTern(
      ["config", "--base-url", `ftp://h/v1/Bearer%20${TOKEN}`],
      { cwd: ws.dir, env },
    );
    equal(refused.code, 2);
    match(refused.stderr, /expected an http or https URL, got "ftp:\/\/h\/v1\/\*\*\*"/);
    equal(leaks(refused.stderr), false, refused.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("projectModelNotice() names a project's server without the key in its path", () => {
  const notice = projectModelNotice(
    { baseUrl: `https://gw.test/${TOKEN}/v1`, provider: undefined },
    { baseUrl: { layer: "project", file: "/w/.tern/config.jsonc" } },
  );
  ok(notice?.startsWith("the model's server is https://gw.test/***/v1, chosen by"), notice);
});

Deno.test("tern models sends a key in the base URL's path, and shows it nowhere, nor in a listing's error", async () => {
  const ws = await tempWorkspace();
  const paths: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { pathname } = new URL(req.url);
    paths.push(pathname);
    // A server that quotes the path it did not serve, as many do.
    if (!pathname.startsWith("/ok/")) {
      return Response.json({ error: { message: `no route for ${pathname}` } }, { status: 404 });
    }
    return Response.json({ data: [{ id: "listed-model-b2" }] });
  });
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const port = server.addr.port;
    const listed = await runTern(
      ["models", "--base-url", `http://127.0.0.1:${port}/ok/${TOKEN}/v1`, "-m", "m"],
      { cwd: ws.dir, env },
    );
    equal(listed.code, 0, listed.stderr);
    match(listed.stdout, new RegExp(`http://127\\.0\\.0\\.1:${port}/ok/\\*\\*\\*/v1`));
    match(listed.stdout, /listed-model-b2/);
    equal(leaks(listed.stdout + listed.stderr), false, listed.stdout);
    // The server got the key, in the path.
    equal(paths[0], `/ok/${TOKEN}/v1/models`);

    for (const args of [[], ["--json"]]) {
      const failed = await runTern(
        ["models", "--base-url", `http://127.0.0.1:${port}/v1/${TOKEN}`, "-m", "m", ...args],
        { cwd: ws.dir, env },
      );
      equal(failed.code, 0, failed.stderr);
      // No known key format: only the masker told the URL's secrets finds it in the echo.
      match(failed.stdout, /no route for \/v1\//);
      equal(leaks(failed.stdout + failed.stderr), false, failed.stdout);
    }
    ok(paths.includes(`/v1/${TOKEN}/models`), paths.join(", "));
  } finally {
    await server.shutdown();
    await ws.cleanup();
  }
});

Deno.test("tern run names a server that refuses it, or that it cannot reach, without the key in its base URL's path", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "x" };
    // Nothing listens on a port just freed: the connection is refused and the error names the
    // server.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const run = await runTern(
      ["run", "--base-url", `http://127.0.0.1:${port}/gw/${TOKEN}/v1`, "-m", "scripted", "hi"],
      { cwd: ws.dir, env },
    );
    ok(run.code !== 0, run.stderr);
    ok(run.stderr.includes(`127.0.0.1:${port}`), run.stderr);
    equal(leaks(run.stdout + run.stderr), false, run.stderr);
    // A server that refuses the path: its error names the base URL, the key in it hidden.
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => Response.json({ error: { message: "no such route" } }, { status: 404 }),
    );
    const refused = await runTern(
      ["run", "--base-url", `http://127.0.0.1:${server.addr.port}/gw/${TOKEN}/v1`, "-m", "m", "hi"],
      { cwd: ws.dir, env },
    );
    ok(refused.code !== 0, refused.stderr);
    ok(refused.stderr.includes("/gw/***/v1"), refused.stderr);
    equal(leaks(refused.stdout + refused.stderr), false, refused.stderr);
  } finally {
    await ws.cleanup();
  }
});
