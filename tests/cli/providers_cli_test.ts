/**
 * End-to-end: the provider layer through the real `tern` process against the scripted model
 * server (Chat Completions, Responses and Anthropic Messages): tool rounds per API, keys,
 * usage and cost, retries, fallback, cut streams, thinking levels, session restore and
 * `tern models`.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Usage } from "../../src/core/messages.ts";
import { THINKING_BUDGETS } from "../../src/llm/model_info.ts";
import type { Script, ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import {
  type RecordedRequest,
  type ScriptedServer,
  startScriptedServer,
  withScriptedServer,
} from "../support/scripted_server.ts";
import { runTern, tempWorkspace, type TernRun } from "../support/tern_process.ts";

/** The flags that point a run at claude-sonnet-4-5 through Anthropic's API on the scripted server. */
function claude(server: { baseUrl: string }): string[] {
  return ["--provider", "anthropic", "--base-url", server.baseUrl, "--model", "claude-sonnet-4-5"];
}

interface Workspace {
  dir: string;
  home: string;
  /** Runs tern here with TERN_HOME, HOME and fast retries set, plus `env`. */
  tern(args: string[], env?: Record<string, string>): Promise<TernRun>;
}

/** A temporary workspace and TERN_HOME for a sequence of runs, removed afterwards. */
async function withWorkspace(fn: (ws: Workspace) => Promise<void>): Promise<void> {
  const ws = await tempWorkspace();
  try {
    await fn({
      dir: ws.dir,
      home: ws.home,
      tern: (args, env = {}) =>
        runTern(args, {
          cwd: ws.dir,
          env: { TERN_HOME: ws.home, HOME: ws.home, TERN_RETRY_BASE_MS: "1", ...env },
        }),
    });
  } finally {
    await ws.cleanup();
  }
}

/** A scripted server (no chunk delay) and a workspace, both cleaned up. */
function withBench(
  script: Script,
  fn: (server: ScriptedServer, ws: Workspace) => Promise<void>,
): Promise<void> {
  return withScriptedServer(script, (server) => withWorkspace((ws) => fn(server, ws)), {
    chunkDelayMs: 0,
  });
}

/** The three API styles, with the path each one posts to and a model it serves. */
const APIS = [
  { provider: "anthropic", path: "/v1/messages", model: "claude-sonnet-4-5" },
  { provider: "openai-responses", path: "/v1/responses", model: "gpt-4.1" },
  { provider: "openai", path: "/v1/chat/completions", model: "gpt-4.1" },
] as const;

const ANTHROPIC_KEY = "sk-ant-test-7c1d93b2";
const OPENAI_KEY = "sk-openai-test-52e8a0f4";

function call(name: string, args: unknown, id: string): ScriptedReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** Reads `notes.txt` with the read tool, then answers. */
const readThenAnswer = (_request: ModelRequest, index: number): ScriptedReply =>
  index % 2 === 0
    ? { text: "Reading.", ...call("read", { path: "notes.txt" }, `toolu_${index}`) }
    : { text: "The notes say hello." };

function lastUser(request: ModelRequest): string {
  return request.messages.findLast((m) => m.role === "user")?.content ?? "";
}

const echo = (request: ModelRequest): ScriptedReply => ({ text: `done: ${lastUser(request)}` });

const said = (request: RecordedRequest) =>
  request.modelRequest.messages.filter((m) => m.role !== "system").map((m) =>
    `${m.role}:${m.content}`
  );

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...filesUnder(path));
    else if (entry.isFile) found.push(path);
  }
  return found;
}

/** The entries (header first) of the only session file under `home`. */
function onlySession(home: string): Record<string, unknown>[] {
  const files = filesUnder(join(home, "sessions")).filter((path) => path.endsWith(".jsonl"));
  equal(files.length, 1, files.join("\n"));
  return Deno.readTextFileSync(files[0]).trim().split("\n").map((line) => JSON.parse(line));
}

function sessionId(home: string): string {
  return String(onlySession(home)[0].id);
}

Deno.test("tern run completes a tool round over each API at the API's own path", async () => {
  for (const api of APIS) {
    await withBench(readThenAnswer, async (server, { dir, tern }) => {
      await Deno.writeTextFile(join(dir, "notes.txt"), "hello from the notes file\n");
      const run = await tern([
        "run",
        "--provider",
        api.provider,
        "--base-url",
        server.baseUrl,
        "--model",
        api.model,
        "-o",
        "json",
        "what do the notes say",
      ], { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY });
      equal(run.code, 0, `${api.provider}: ${run.stderr}`);
      const result = JSON.parse(run.stdout);
      equal(result.exitReason, "COMPLETED", api.provider);
      equal(result.text, "The notes say hello.", api.provider);
      equal(result.toolCalls, 1, api.provider);
      ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0, api.provider);
      equal(server.requests.length, 2, api.provider);
      for (const request of server.requests) {
        equal(request.path, api.path, api.provider);
        equal(request.body.model, api.model, api.provider);
      }
      const fed = server.requests[1].modelRequest.messages.at(-1)!;
      equal(fed.role, "tool", api.provider);
      ok(fed.content.includes("hello from the notes file"), `${api.provider}: ${fed.content}`);
      const headers = server.requests[0].headers;
      if (api.provider === "anthropic") {
        equal(headers["x-api-key"], ANTHROPIC_KEY);
        equal(headers["authorization"], undefined);
      } else {
        equal(headers["authorization"], `Bearer ${OPENAI_KEY}`, api.provider);
        equal(headers["x-api-key"], undefined, api.provider);
      }
    });
  }
});

/** USD per million tokens, set in the user config for claude-sonnet-4-5 at anthropic. */
const PRICE = { input: 2, output: 10, cachedInput: 0.5, cacheWrite: 4 };
const CALL_USAGE: Usage = {
  inputTokens: 10_000,
  outputTokens: 2_000,
  cachedTokens: 4_000,
  reasoningTokens: 0,
  cacheWriteTokens: 1_000,
};

function priceOf(usage: Usage): number {
  const written = usage.cacheWriteTokens ?? 0;
  const plain = usage.inputTokens - usage.cachedTokens - written;
  return (plain * PRICE.input + usage.cachedTokens * PRICE.cachedInput +
    written * PRICE.cacheWrite + usage.outputTokens * PRICE.output) / 1_000_000;
}

function near(actual: unknown, expected: number, what: string) {
  ok(
    typeof actual === "number" && Math.abs(actual - expected) < 1e-9,
    `${what}: expected ${expected}, got ${actual}`,
  );
}

Deno.test("tern run prices usage from the config's prices; the session adds up runs", async () => {
  const script = (_request: ModelRequest, index: number): ScriptedReply => ({
    ...(index % 2 === 0 ? call("list", {}, `toolu_${index}`) : { text: "listed" }),
    usage: CALL_USAGE,
  });
  await withBench(script, async (server, { home, tern }) => {
    await Deno.writeTextFile(
      join(home, "config.jsonc"),
      JSON.stringify({ models: { "anthropic/claude-sonnet-4-5": { price: PRICE } } }),
    );
    const perRun = 2 * priceOf(CALL_USAGE);
    const first = await tern([
      "run",
      ...claude(server),
      "-o",
      "json",
      "list it",
    ]);
    equal(first.code, 0, first.stderr);
    const one = JSON.parse(first.stdout);
    equal(one.usage.inputTokens, 2 * CALL_USAGE.inputTokens);
    equal(one.usage.outputTokens, 2 * CALL_USAGE.outputTokens);
    equal(one.usage.cachedTokens, 2 * CALL_USAGE.cachedTokens);
    near(one.cost, perRun, "cost");
    near(one.sessionCost, perRun, "sessionCost after one run");

    // The session brings the provider and model back; only the base URL is not recorded.
    const second = await tern(["run", "-c", "--base-url", server.baseUrl, "-o", "json", "again"]);
    equal(second.code, 0, second.stderr);
    deepEqual(server.requests.map((r) => r.body.model), Array(4).fill("claude-sonnet-4-5"));
    const two = JSON.parse(second.stdout);
    equal(two.session, one.session);
    near(two.cost, perRun, "cost of the second run");
    near(two.sessionCost, 2 * perRun, "sessionCost after two runs");
    equal(two.sessionUsage.inputTokens, 4 * CALL_USAGE.inputTokens);

    const shown = await tern(["sessions", "show", one.session]);
    equal(shown.code, 0, shown.stderr);
    match(shown.stdout, new RegExp(`^cost +\\$${(2 * perRun).toFixed(4)}$`, "m"));
    const json = await tern(["sessions", "show", one.session, "--json"]);
    near(JSON.parse(json.stdout).cost, 2 * perRun, "sessions show --json cost");
  });
});

Deno.test("tern run retries a 429 after its Retry-After and says so on stderr", async () => {
  const script: ScriptedReply[] = [
    { fault: "http429", retryAfter: "0" },
    { text: "answered after the rate limit" },
  ];
  await withBench(script, async (server, { tern }) => {
    const run = await tern([
      "run",
      "--provider",
      "openai-responses",
      "--base-url",
      server.baseUrl,
      "--model",
      "gpt-4.1",
      "task",
    ]);
    equal(run.code, 0, run.stderr);
    equal(run.stdout, "answered after the rate limit\n");
    match(run.stderr, /model call failed: .*429.*; retry 1 in /);
    equal(server.requests.length, 2);
  });
});

Deno.test("tern run retries server errors until the model answers", async () => {
  const script: ScriptedReply[] = [{ fault: "http500" }, { fault: "http500" }, { text: "ok" }];
  await withBench(script, async (server, { tern }) => {
    const run = await tern([
      "run",
      ...claude(server),
      "-o",
      "json",
      "task",
    ]);
    equal(run.code, 0, run.stderr);
    equal(JSON.parse(run.stdout).text, "ok");
    equal(server.requests.length, 3);
  });
});

Deno.test("tern run falls back to a config provider when the main one keeps failing", async () => {
  const backupScript: ScriptedReply[] = [{ text: "answer from the backup" }];
  await withScriptedServer(backupScript, async (backup) => {
    await withBench(() => ({ fault: "http500" }), async (main, { home, tern }) => {
      await Deno.writeTextFile(
        join(home, "config.jsonc"),
        JSON.stringify({ providers: { backup: { api: "openai", baseUrl: backup.baseUrl } } }),
      );
      const run = await tern(
        ["run", "--base-url", main.baseUrl, "-m", "scripted", "--fallback", "backup/b-model", "t"],
        { TERN_MAX_RETRIES: "1", TERN_API_KEY: "sk-main-only-9d1e" },
      );
      equal(run.code, 0, run.stderr);
      equal(run.stdout, "answer from the backup\n");
      match(run.stderr, /switching to backup\/b-model/);
      equal(main.requests.length, 2, "one try and one retry at the main server");
      equal(backup.requests.length, 1);
      equal(backup.requests[0].body.model, "b-model");
      ok(!JSON.stringify(backup.requests[0].headers).includes("sk-main-only"), "no main key");
      const switched = onlySession(home).find((e) => e.type === "model" && e.cause === "fallback");
      ok(switched, "the switch is a session entry");
      equal(switched.provider, "backup");
      equal(switched.model, "b-model");
      const shown = await tern(["sessions", "show", sessionId(home)]);
      equal(shown.code, 0, shown.stderr);
      match(shown.stdout, /^fallback +switched to backup\/b-model$/m);
    });
  }, { chunkDelayMs: 0 });
});

Deno.test("tern run does not retry a stream cut in the middle of a tool call", async () => {
  for (const api of APIS) {
    const cut: ScriptedReply = {
      text: "Writing the file now.",
      toolCalls: [{ id: "toolu_w", name: "write", arguments: '{"path":"cut.txt","content":"x"}' }],
      fault: "drop_mid_stream",
    };
    await withBench([cut, { text: "never asked" }], async (server, { dir, home, tern }) => {
      const run = await tern([
        "run",
        "--provider",
        api.provider,
        "--base-url",
        server.baseUrl,
        "--model",
        api.model,
        "--mode",
        "bypass",
        "write it",
      ]);
      equal(run.code, 7, `${api.provider}: ${run.stderr}`);
      match(run.stderr, /CLIENT_ERROR/, api.provider);
      match(run.stderr, /not retried/, api.provider);
      equal(server.requests.length, 1, api.provider);
      ok(!filesUnder(dir).some((path) => path.endsWith("cut.txt")), "the write did not run");
      const messages = onlySession(home).filter((e) => e.type === "message");
      ok(messages.every((e) => (e.message as { role: string }).role !== "tool"), api.provider);
    });
  }
});

Deno.test("tern run reports a rejected key as HTTP 401 and never shows or stores the key", async () => {
  const secret = "sk-secret-3b7f0c9a1e";
  for (const api of APIS) {
    await withBench([{ fault: "http401" }], async (server, { dir, home, tern }) => {
      const run = await tern([
        "run",
        "--provider",
        api.provider,
        "--base-url",
        server.baseUrl,
        "--model",
        api.model,
        "task",
      ], { TERN_API_KEY: secret });
      equal(run.code, 7, `${api.provider}: ${run.stderr}`);
      match(run.stderr, /HTTP 401/, api.provider);
      equal(server.requests.length, 1, "a rejected key is not retried");
      // The key was sent, so not finding it below means something.
      ok(JSON.stringify(server.requests[0].headers).includes(secret), api.provider);
      ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), api.provider);
      onlySession(home);
      for (const file of [...filesUnder(home), ...filesUnder(dir)]) {
        ok(!Deno.readTextFileSync(file).includes(secret), `the key is in ${file}`);
      }
    });
  }
});

Deno.test("tern run -c replays the session's model switch and the conversation", async () => {
  await withBench(echo, async (server, { tern }) => {
    const base = ["run", "--base-url", server.baseUrl, "-o", "json"];
    const env = { TERN_API_KEY: "sk-test-switch" };
    equal((await tern([...base, "--model", "m1", "task one"], env)).code, 0);
    equal((await tern([...base, "-c", "--model", "m2", "task two"], env)).code, 0);
    const third = await tern([...base, "-c", "task three"], env);
    equal(third.code, 0, third.stderr);
    deepEqual(server.requests.map((r) => r.body.model), ["m1", "m2", "m2"]);
    deepEqual(said(server.requests[2]), [
      "user:task one",
      "assistant:done: task one",
      "user:task two",
      "assistant:done: task two",
      "user:task three",
    ]);
    const shown = await tern(["sessions", "show", JSON.parse(third.stdout).session]);
    match(shown.stdout, /^model +m2\b/m);
  });
});

Deno.test("tern run -c keeps the session's thinking level for an Anthropic model", async () => {
  await withBench(echo, async (server, { tern }) => {
    const first = await tern([
      "run",
      ...claude(server),
      "--thinking",
      "high",
      "task one",
    ]);
    equal(first.code, 0, first.stderr);
    const second = await tern(["run", "-c", "--base-url", server.baseUrl, "task two"]);
    equal(second.code, 0, second.stderr);
    for (const request of server.requests) {
      equal(request.path, "/v1/messages");
      equal(request.body.model, "claude-sonnet-4-5");
      deepEqual(request.body.thinking, { type: "enabled", budget_tokens: THINKING_BUDGETS.high });
    }
  });
});

Deno.test("tern run -c --provider <the session's provider> keeps a model of that provider", async () => {
  await withBench(echo, async (server, { tern }) => {
    const at = ["--provider", "anthropic", "--base-url", server.baseUrl];
    const first = await tern(["run", ...at, "--model", "claude-sonnet-4-5", "task one"]);
    equal(first.code, 0, first.stderr);
    // Repeating the session's provider without --model: its model (which is also the
    // provider's default here), never the global default model (gpt-4.1-mini).
    const second = await tern(["run", "-c", ...at, "task two"]);
    equal(second.code, 0, second.stderr);
    deepEqual(server.requests.map((r) => r.body.model), ["claude-sonnet-4-5", "claude-sonnet-4-5"]);
  });
});

Deno.test("--thinking maps to each API's reasoning parameter, only for thinking models", async () => {
  const reply: ScriptedReply = { thinking: "THINK-MARK weighing options", text: "the answer" };
  const cases = [
    ["openai", "o4-mini", "low"],
    ["openai", "gpt-4.1", "low"],
    ["openai-responses", "o4-mini", "high"],
    ["anthropic", "claude-sonnet-4-5", "off"],
  ] as const;
  for (const [provider, model, level] of cases) {
    await withBench([reply], async (server, { tern }) => {
      const run = await tern([
        "run",
        "--provider",
        provider,
        "--base-url",
        server.baseUrl,
        "--model",
        model,
        "--thinking",
        level,
        "think",
      ]);
      const what = `${provider} ${model} ${level}`;
      equal(run.code, 0, `${what}: ${run.stderr}`);
      const body = server.requests[0].body;
      if (model === "o4-mini" && provider === "openai") equal(body.reasoning_effort, "low");
      if (model === "gpt-4.1") ok(!("reasoning_effort" in body), JSON.stringify(body));
      if (provider === "openai-responses") {
        equal((body.reasoning as { effort?: string }).effort, "high");
      }
      if (provider === "anthropic") ok(!("thinking" in body), JSON.stringify(body));
      // Thinking goes to stderr only: `tern run … > file` keeps the answer alone.
      equal(run.stdout, "the answer\n", what);
      if (model === "o4-mini") ok(run.stderr.includes("THINK-MARK weighing options"), run.stderr);
    });
  }
});

Deno.test("tern run rejects an unknown provider, thinking level or missing key with exit 2", async () => {
  await withWorkspace(async ({ tern }) => {
    const unknown = await tern(["run", "--provider", "nope", "task"]);
    equal(unknown.code, 2, unknown.stderr);
    match(unknown.stderr, /Unknown provider "nope"/);
    for (const name of ["openai", "openai-responses", "anthropic", "ollama"]) {
      ok(unknown.stderr.includes(`"${name}"`), `${name} is not listed: ${unknown.stderr}`);
    }
    const thinking = await tern(["run", "--thinking", "extreme", "task"]);
    equal(thinking.code, 2, thinking.stderr);
    match(
      thinking.stderr,
      /Invalid command-line option --thinking: key "thinking": expected "off", "low", "medium" or "high", got "extreme"/,
    );
    // Refused before any request: the real Anthropic URL is never contacted.
    const noKey = await tern(["run", "--provider", "anthropic", "task"]);
    equal(noKey.code, 2, noKey.stderr);
    match(noKey.stderr, /ANTHROPIC_API_KEY/);
  });
});

Deno.test("tern run rejects a fallback naming an unknown provider with exit 2", async () => {
  await withBench([{ text: "should not run" }], async (server, { tern }) => {
    const run = await tern(["run", "--base-url", server.baseUrl, "--fallback", "nope/x", "task"]);
    equal(run.code, 2, `exit ${run.code}: ${run.stderr}`);
    match(run.stderr, /Cannot use fallback "nope\/x": unknown provider "nope"/);
    equal(server.requests.length, 0);
  });
});

Deno.test("keys go only to their own provider; a project cannot define providers", async () => {
  await withBench([{ text: "ok" }], async (server, { dir, tern }) => {
    const run = await tern(
      [
        "run",
        ...claude(server),
        "t",
      ],
      { OPENAI_API_KEY: OPENAI_KEY },
    );
    equal(run.code, 0, run.stderr);
    equal(server.requests.length, 1);
    const headers = server.requests[0].headers;
    ok(headers["x-api-key"] !== OPENAI_KEY, "the OpenAI key went to Anthropic");
    ok(!JSON.stringify(headers).includes(OPENAI_KEY), JSON.stringify(headers));

    await Deno.mkdir(join(dir, ".tern"));
    await Deno.writeTextFile(
      join(dir, ".tern", "config.jsonc"),
      JSON.stringify({ providers: { evil: { api: "openai", baseUrl: server.baseUrl } } }),
    );
    const refused = await tern(["run", "--base-url", server.baseUrl, "t"], {
      OPENAI_API_KEY: OPENAI_KEY,
    });
    equal(refused.code, 2, refused.stderr);
    match(refused.stderr, /Refusing "providers"/);
    equal(server.requests.length, 1, "no request after the refusal");
  });
});

Deno.test("tern models --offline lists the catalog of providers with a key", async () => {
  await withWorkspace(async ({ tern }) => {
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY };
    const listed = await tern(["models", "--offline"], env);
    equal(listed.code, 0, listed.stderr);
    match(listed.stdout, /^\* openai +openai +https:\/\/api\.openai\.com\/v1/m);
    match(listed.stdout, /^ {2}anthropic +anthropic +.*key: ANTHROPIC_API_KEY$/m);
    match(listed.stdout, /^ +claude-sonnet-4-5 /m);
    ok(!listed.stdout.includes(ANTHROPIC_KEY));

    const chosen = await tern(["models", "--offline", "--provider", "anthropic"], env);
    equal(chosen.code, 0, chosen.stderr);
    match(chosen.stdout, /^\* anthropic +anthropic /m);
    // "→ its model": the model a run with this provider would use (its default here).
    match(chosen.stdout, /^ {2}→ claude-sonnet-4-5 /m);
  });
});

Deno.test("tern models names the variable the main key came from, never 'not set' when one is", async () => {
  await withWorkspace(async ({ tern }) => {
    for (const variable of ["TERN_API_KEY", "OPENAI_API_KEY"]) {
      const listed = await tern(["models", "--offline"], { [variable]: OPENAI_KEY });
      equal(listed.code, 0, listed.stderr);
      match(listed.stdout, new RegExp(`^\\* openai +openai +.*key: ${variable}$`, "m"));
      ok(!listed.stdout.includes("not set"), listed.stdout);
      ok(!listed.stdout.includes(OPENAI_KEY));
    }
  });
});

Deno.test("tern models lists what the server discovers, and reports a server that is down", async () => {
  await withBench([], async (server, { tern }) => {
    const listed = await tern([
      "models",
      "--provider",
      "openai",
      "--base-url",
      server.baseUrl,
      "--json",
    ]);
    equal(listed.code, 0, listed.stderr);
    const main = JSON.parse(listed.stdout).find((l: { main: boolean }) => l.main);
    equal(main.provider, "openai");
    equal(main.error, undefined);
    const found = main.models.find((m: { id: string }) => m.id === "scripted-model");
    ok(found, JSON.stringify(main.models.map((m: { id: string }) => m.id)));
    equal(found.source, "discovered");
  });
  const down = await startScriptedServer([]);
  await down.close();
  await withWorkspace(async ({ tern }) => {
    const listed = await tern([
      "models",
      "--provider",
      "openai",
      "--base-url",
      down.baseUrl,
      "--json",
    ]);
    equal(listed.code, 0, listed.stderr);
    const main = JSON.parse(listed.stdout).find((l: { main: boolean }) => l.main);
    match(main.error, /Cannot list models at "http:\/\/127\.0\.0\.1:\d+"/);
    ok(main.models.some((m: { id: string }) => m.id === "gpt-4.1"), "the catalog is still listed");
  });
});
