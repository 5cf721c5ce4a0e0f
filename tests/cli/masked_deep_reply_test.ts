/**
 * A model server that nests what it sends thousands of levels deep (a call's arguments, its
 * `extra_content`, reasoning details), with the key hidden at the bottom, against the real
 * `tern run` with a key set, so every event and session entry is masked on its way out. The
 * masking walks it all without overflowing the stack: the call is refused as too deep, the key
 * is masked wherever it sat, and the session continues.
 */
import { equal, match, ok } from "node:assert/strict";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
import { filesUnder } from "../support/files_under.ts";

const KEY = "sk-test-DEEPNESTING-7c41f9";
/** Past what a recursive walk survives (2,000 levels crashed tern), far past the limit of 100. */
const DEPTH = 5_000;

/** `inner` under DEPTH levels of arrays, as JSON text. */
const deepArray = (inner: string) => "[".repeat(DEPTH) + inner + "]".repeat(DEPTH);
/** `inner` under DEPTH levels of objects, as JSON text. */
const deepObject = (inner: string) => '{"a":'.repeat(DEPTH) + inner + "}".repeat(DEPTH);
/** The key with its first character as a JSON escape: the text holds it only once parsed. */
const ESCAPED_KEY = `"\\u${KEY.charCodeAt(0).toString(16).padStart(4, "0")}${KEY.slice(1)}"`;

/** One Chat Completions chunk carrying `delta`, as SSE text. */
function chunk(delta: string, finish: string | null = null): string {
  return `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,` +
    `"delta":${delta},"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
}

/** The deep reply first, then a plain answer to every later request. */
function reply(requests: number): string {
  if (requests > 1) {
    return chunk('{"role":"assistant","content":"done"}') + chunk("{}", "stop") +
      "data: [DONE]\n\n";
  }
  const args = JSON.stringify(`{"path":${deepArray(ESCAPED_KEY)}}`);
  const call = `{"index":0,"id":"deep1","type":"function","function":{"name":"read",` +
    `"arguments":${args}},"extra_content":{"google":${deepObject(ESCAPED_KEY)}}}`;
  const details = `[{"type":"reasoning.text","index":0,"text":"hmm","x":${
    deepArray(ESCAPED_KEY)
  }}]`;
  return chunk(`{"role":"assistant","content":"","reasoning_details":${details}}`) +
    chunk(`{"tool_calls":[${call}]}`) + chunk("{}", "tool_calls") + "data: [DONE]\n\n";
}

Deno.test("tern run with a key refuses a call nested 5,000 deep, masks the key deep in it and continues the session", async () => {
  const ws = await tempWorkspace();
  const bodies: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      if (request.method === "GET") {
        return Response.json({ object: "list", data: [{ id: "scripted", object: "model" }] });
      }
      bodies.push(await request.text());
      return new Response(reply(bodies.length), {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
  // A window wide enough that the long arguments do not start a compaction.
  const env = {
    TERN_HOME: ws.home,
    HOME: ws.home,
    TERN_API_KEY: KEY,
    TERN_CONTEXT_WINDOW: "4000000",
  };
  try {
    const run = await runTern(scriptedRunArgs(baseUrl, "go"), { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr.slice(-2000));
    ok(!run.stderr.includes("internal error"), run.stderr.slice(-2000));
    equal(bodies.length, 2);
    // The model was told why: a refusal it can act on, not a crash.
    const second = JSON.parse(bodies[1]) as { messages: { role: string; content: unknown }[] };
    const results = second.messages.filter((m) => m.role === "tool");
    equal(results.length, 1);
    match(String(results[0].content), /INVALID_ARGUMENTS.*nest more than 100 levels deep/s);
    const result = JSON.parse(run.stdout) as { exitReason: string; text: string };
    equal(result.exitReason, "COMPLETED");
    equal(result.text, "done");

    // The session continues: its history (the deep call and its refusal) loads and is sent.
    const next = await runTern(
      ["run", "--base-url", baseUrl, "-m", "scripted", "--mode", "bypass", "-c", "again"],
      { cwd: ws.dir, env },
    );
    equal(next.code, 0, next.stderr.slice(-2000));
    equal(bodies.length, 3);
    const third = JSON.parse(bodies[2]) as { messages: { role: string }[] };
    equal(third.messages.filter((m) => m.role === "tool").length, 1);

    // The key the server hid at the bottom of each is masked in all that was shown and kept.
    for (const text of [run.stdout, run.stderr, next.stdout, next.stderr]) {
      ok(!text.includes(KEY), "the key was printed");
    }
    const kept = (await filesUnder(ws.home)).filter((file) => !/\/audit\/deno-/.test(file));
    ok(kept.some((file) => file.endsWith(".jsonl") && file.includes("/sessions/")));
    for (const file of kept) {
      const text = await Deno.readTextFile(file).catch(() => "");
      ok(!text.includes(KEY.slice(1)), `the key is in ${file}`);
    }
  } finally {
    await server.shutdown();
    await ws.cleanup();
  }
});
