/**
 * End-to-end: conversation-level prompt caching through the real `tern` process against the
 * scripted model server. Anthropic gets cache breakpoints that move with the conversation
 * (never more than four); OpenAI's APIs get one `prompt_cache_key` per session; the money the
 * cache saved shows in `--output json`.
 */
import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Usage } from "../../src/core/messages.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { ModelRequest } from "../../src/llm/types.ts";
import { type RecordedRequest, withScriptedServer } from "../support/scripted_server.ts";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

type Block = Record<string, unknown>;
type WireMessage = { role: string; content: Block[] };

/** Two tool rounds, then an answer: three model calls per run. */
function twoCallsThenAnswer(_request: ModelRequest, index: number): ScriptedReply {
  const usage: Usage = {
    inputTokens: 10_000,
    outputTokens: 100,
    cachedTokens: 4_000,
    reasoningTokens: 0,
    cacheWriteTokens: 1_000,
  };
  if (index % 3 === 2) return { text: "listed twice", usage };
  return { toolCalls: [{ id: `toolu_${index}`, name: "list", arguments: "{}" }], usage };
}

/** Where the request marks cache breakpoints: `system`, `tool`, or `message i block j`. */
function breakpoints(request: RecordedRequest): string[] {
  const marks: string[] = [];
  const body = request.body as {
    system?: Block[];
    tools?: Block[];
    messages: WireMessage[];
  };
  body.system?.forEach((b, i) => b.cache_control && marks.push(`system ${i}`));
  body.tools?.forEach((t, i) => t.cache_control && marks.push(`tool ${i}`));
  body.messages.forEach((m, i) =>
    m.content.forEach((b, j) => b.cache_control && marks.push(`message ${i} block ${j}`))
  );
  return marks;
}

/** The messages up to and including `message i`, without cache markers. */
function prefix(request: RecordedRequest, upTo: number): string {
  const messages = (request.body.messages as WireMessage[]).slice(0, upTo + 1);
  return JSON.stringify(messages, (key, value) => key === "cache_control" ? undefined : value);
}

Deno.test("tern run moves Anthropic cache breakpoints along a multi-round conversation", async () => {
  const ws = await tempWorkspace();
  const price = { input: 2, output: 10, cachedInput: 0.5, cacheWrite: 4 };
  try {
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({ models: { "anthropic/claude-sonnet-4-5": { price } } }),
    );
    await withScriptedServer(twoCallsThenAnswer, async (server) => {
      const tern = (args: string[]) =>
        runTern(["run", "--base-url", server.baseUrl, "-o", "json", ...args], {
          cwd: ws.dir,
          env: { TERN_HOME: ws.home, HOME: ws.home },
        });
      const first = await tern(["--provider", "anthropic", "--model", "claude-sonnet-4-5", "go"]);
      equal(first.code, 0, first.stderr);
      const second = await tern(["-c", "again"]);
      equal(second.code, 0, second.stderr);
      const requests = server.requests;
      equal(requests.length, 6);

      const lastTool = (requests[0].body.tools as Block[]).length - 1;
      const marks = requests.map(breakpoints);
      for (const [i, m] of marks.entries()) {
        ok(m.length <= 4, `request ${i} has ${m.length} breakpoints: ${m}`);
        deepEqual(m.slice(0, 2), ["system 0", `tool ${lastTool}`], `request ${i}`);
      }
      // Messages: user, then (assistant, user) per round; the last user message ends each
      // request, and from the second request on the user message before it is marked too.
      deepEqual(marks.map((m) => m.slice(2)), [
        ["message 0 block 0"],
        ["message 0 block 0", "message 2 block 0"],
        ["message 2 block 0", "message 4 block 0"],
        ["message 4 block 0", "message 6 block 0"],
        ["message 6 block 0", "message 8 block 0"],
        ["message 8 block 0", "message 10 block 0"],
      ]);
      // What one request marked last is, byte for byte, the start of the next one: a hit.
      for (let i = 1; i < requests.length; i++) {
        const last = (requests[i - 1].body.messages as WireMessage[]).length - 1;
        equal(prefix(requests[i], last), prefix(requests[i - 1], last), `request ${i}`);
      }

      // 4,000 tokens read at 2 - 0.5 saved, 1,000 written at 4 - 2 extra: $0.004 per call.
      const one = JSON.parse(first.stdout);
      const two = JSON.parse(second.stdout);
      ok(Math.abs(one.saved - 3 * 0.004) < 1e-9, `saved ${one.saved}`);
      ok(Math.abs(two.sessionSaved - 6 * 0.004) < 1e-9, `sessionSaved ${two.sessionSaved}`);
      equal(two.sessionUsage.cachedTokens, 6 * 4_000);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});

for (
  const api of [{ provider: "openai", path: "/v1/chat/completions" }, {
    provider: "openai-responses",
    path: "/v1/responses",
  }]
) {
  Deno.test(`tern run sends ${api.provider} one prompt_cache_key per session`, async () => {
    const ws = await tempWorkspace();
    try {
      await withScriptedServer(twoCallsThenAnswer, async (server) => {
        const tern = (args: string[]) =>
          runTern(["run", "--base-url", server.baseUrl, "-o", "json", ...args], {
            cwd: ws.dir,
            env: { TERN_HOME: ws.home, HOME: ws.home, OPENAI_API_KEY: "sk-test" },
          });
        const start = ["--provider", api.provider, "--model", "gpt-4.1"];
        const first = await tern([...start, "go"]);
        equal(first.code, 0, first.stderr);
        const again = await tern(["-c", "again"]);
        equal(again.code, 0, again.stderr);
        const other = await tern([...start, "a new session"]);
        equal(other.code, 0, other.stderr);
        equal(server.requests.length, 9);
        for (const request of server.requests) equal(request.path, api.path);
        const keys = server.requests.map((r) => r.body.prompt_cache_key);
        const session = JSON.parse(first.stdout).session;
        deepEqual(keys.slice(0, 6), Array(6).fill(`tern-${session}`));
        deepEqual(keys.slice(6), Array(3).fill(`tern-${JSON.parse(other.stdout).session}`));
        notEqual(keys[6], keys[0]);
      }, { chunkDelayMs: 0 });
    } finally {
      await ws.cleanup();
    }
  });
}

Deno.test("tern run sends no prompt_cache_key to other Chat Completions servers", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "hi" }], async (server) => {
      const run = await runTern(
        ["run", "--provider", "ollama", "--base-url", server.baseUrl, "--model", "m", "hi"],
        { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home } },
      );
      equal(run.code, 0, run.stderr);
      equal(server.requests[0].body.prompt_cache_key, undefined);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("/cost shows cached tokens, cache writes and what the prompt cache saved", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(
      join(ws.home, "config.jsonc"),
      JSON.stringify({
        models: {
          "anthropic/claude-sonnet-4-5": {
            price: { input: 2, output: 10, cachedInput: 0.5, cacheWrite: 4 },
          },
        },
      }),
    );
    await withScriptedServer(twoCallsThenAnswer, async (server) => {
      const run = await runTernWithInput(
        ["--provider", "anthropic", "--base-url", server.baseUrl, "--model", "claude-sonnet-4-5"],
        "list it\n/cost\n",
        { cwd: ws.dir, env: { TERN_HOME: ws.home, HOME: ws.home, NO_COLOR: "1" } },
      );
      equal(run.code, 0, run.stderr);
      ok(run.stdout.includes("(cached 12000, cache writes 3000)"), run.stdout);
      ok(run.stdout.includes("prompt cache saved $0.0120"), run.stdout);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
  }
});
