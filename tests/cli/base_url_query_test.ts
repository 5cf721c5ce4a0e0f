/**
 * A base URL with a query (`…/v1?api-version=1`, as some servers want on every request): tern
 * asks `<path>/chat/completions?api-version=1`, never a URL with the API's path in the query,
 * which such a server answered 404 (`…/v1?api-version=1/chat/completions`). The real CLI against
 * the scripted model server on 127.0.0.1.
 */
import { equal, match } from "node:assert/strict";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run and tern models reach a base URL that has a query", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "answered through the query URL" }], async (server) => {
      const baseUrl = `${server.baseUrl}?api-version=2025-01-01`;
      const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
      const run = await runTern(
        ["run", "--base-url", baseUrl, "-m", "scripted", "--no-sandbox", "hi"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 0, run.stderr);
      match(run.stdout, /answered through the query URL/);
      const models = await runTern(["models", "--base-url", baseUrl], { cwd: ws.dir, env });
      equal(models.code, 0, models.stderr);
      match(models.stdout, /scripted/);
      equal(server.requests[0]?.path, "/v1/chat/completions");
    });
  } finally {
    await ws.cleanup();
  }
});
