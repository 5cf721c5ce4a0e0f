/**
 * End-to-end: `tern memory save|list|forget` on the real files, and the remembered facts a
 * `tern run` message gets: only the most relevant, with the message, the system prompt the same.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern memory saves, lists and forgets facts per workspace and globally; errors exit 2", async () => {
  const ws = await tempWorkspace();
  const other = await tempWorkspace();
  const env = { TERN_HOME: ws.home, HOME: ws.home };
  const tern = (args: string[], cwd = ws.dir) => runTern(args, { cwd, env });
  try {
    const saved = await tern(["memory", "save", "Use", "tabs", "in", "TypeScript"]);
    equal(saved.code, 0, saved.stderr);
    match(saved.stdout, /^Remembered ([0-9a-f]{8}) \(this workspace\): Use tabs in TypeScript\n$/);
    const global = await tern(["memory", "save", "--global", "--json", "Prefer British spelling"]);
    equal(global.code, 0, global.stderr);
    const fact = JSON.parse(global.stdout);
    equal(fact.scope, "user");
    const here = JSON.parse((await tern(["memory", "list", "--json"])).stdout);
    deepEqual(here.map((f: { text: string }) => f.text).sort(), [
      "Prefer British spelling",
      "Use tabs in TypeScript",
    ]);
    const there = await tern(["memory", "list"], other.dir);
    match(there.stdout, /global .* Prefer British spelling/);
    ok(!there.stdout.includes("tabs"), "a project fact stays in its workspace");
    const forgot = await tern(["memory", "forget", fact.id.slice(0, 4)]);
    equal(forgot.code, 0, forgot.stderr);
    match(forgot.stdout, /^Forgot [0-9a-f]{8}: Prefer British spelling/);
    match((await tern(["memory", "list"])).stdout, /^[0-9a-f]{8} {2}project .*Use tabs/);
    const unknown = await tern(["memory", "forget", "ffffffff"]);
    equal(unknown.code, 2);
    match(unknown.stderr, /No remembered fact has an id starting "ffffffff"/);
    const empty = await tern(["memory", "save"]);
    equal(empty.code, 2);
    match(empty.stderr, /Nothing to save/);
    equal((await tern(["memory", "list", "--global"])).code, 2);
  } finally {
    await ws.cleanup();
    await other.cleanup();
  }
});

Deno.test("a run sends only the facts relevant to its message, with the message, and tern context says which and why", async () => {
  const server = await startScriptedServer(() => ({ text: "ok" }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const env = {
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: "sk-test-memory",
    TERN_BASE_URL: server.baseUrl,
    TERN_MODE: "bypass",
  };
  const tern = (args: string[], extra: Record<string, string> = {}) =>
    runTern(args, { cwd: ws.dir, env: { ...env, ...extra } });
  try {
    const facts = [
      "Database migrations run with deno task migrate",
      "The auth client lives in src/auth/client.ts",
      "Auth tokens expire after one hour",
      "Releases are cut from main",
    ];
    for (const fact of facts) equal((await tern(["memory", "save", fact])).code, 0);
    const run = await tern(["run", "fix the auth client login"]);
    equal(run.code, 0, run.stderr);
    const [request] = server.requests;
    const user = request.modelRequest.messages.at(-1)!.content;
    match(user, /^fix the auth client login\n\n\[Remembered facts/);
    ok(user.includes("src/auth/client.ts") && user.includes("expire after one hour"), user);
    ok(!user.includes("migrate") && !user.includes("Releases"), "irrelevant facts stay out");
    ok(
      !request.modelRequest.messages[0].content.includes("auth client"),
      "not in the system prompt",
    );
    const one = await tern(["run", "fix the auth client login"], { TERN_MEMORY_FACTS: "1" });
    equal(one.code, 0, one.stderr);
    const limited = server.requests[1].modelRequest.messages.at(-1)!.content;
    equal(limited.split("\n").filter((line) => line.startsWith("- ")).length, 1);
    equal(
      server.requests[1].modelRequest.messages[0].content,
      request.modelRequest.messages[0].content,
    );
    const context = await tern(["context", "auth", "client"]);
    equal(context.code, 0, context.stderr);
    match(context.stdout, /Memory: 4 saved facts; each message gets the 5 most relevant/);
    match(context.stdout, /for "auth client": 2 facts/);
    match(
      context.stdout,
      /[0-9a-f]{8} project score [\d.]+ \(auth, client\): The auth client lives/,
    );
    equal(server.requests.length, 2);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
