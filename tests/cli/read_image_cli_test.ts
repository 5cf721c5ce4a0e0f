/**
 * End-to-end: the model calls `read` on an image file through the real process (the read runs
 * in the confined tool worker) against the scripted server for all three API styles: the next
 * request carries the image inside the tool result in each API's shape (Chat Completions: in a
 * user message right after the tool message), the session stores it once by content hash (the
 * entry holds only the hash), and a model without images gets a text note instead. A symlink
 * to an image outside the workspace is refused by the worker's confined read.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
const PNG_BASE64 = btoa(String.fromCharCode(...PNG));
const DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const READ_SHOT = { toolCalls: [{ name: "read", arguments: '{"path":"shot.png"}' }] };

type Body = Record<string, unknown>;
type Part = Record<string, unknown>;

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const APIS: {
  provider: string;
  model: string;
  check: (body: Body) => void;
  text: (body: Body) => string;
}[] = [
  {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    check: (body) => {
      const blocks = (body.messages as { content: Part[] }[]).flatMap((m) => m.content);
      const result = blocks.find((b) => b.type === "tool_result")!;
      const content = result.content as Part[];
      equal(content[0].type, "text");
      match(String(content[0].text), /Image "shot\.png" \(image\/png, \d+ bytes\)/);
      const source = content[1].source as Part;
      equal(content[1].type, "image");
      equal(source.type, "base64");
      equal(source.media_type, "image/png");
      equal(source.data, PNG_BASE64);
    },
    text: (body) => {
      const blocks = (body.messages as { content: Part[] }[]).flatMap((m) => m.content);
      return String(blocks.find((b) => b.type === "tool_result")!.content);
    },
  },
  {
    provider: "openai",
    model: "gpt-4.1",
    check: (body) => {
      const messages = body.messages as { role: string; content: unknown }[];
      const at = messages.findIndex((m) => m.role === "tool");
      equal(typeof messages[at].content, "string", "a Chat Completions tool message is text");
      // The image follows in a user message right after the tool message.
      const next = messages[at + 1];
      equal(next.role, "user");
      const parts = next.content as Part[];
      match(String(parts[0].text), /Images from the read call/);
      equal((parts[1].image_url as Part).url, DATA_URL);
    },
    text: (body) => {
      const messages = body.messages as { role: string; content: unknown }[];
      ok(!messages.some((m) => Array.isArray(m.content)), "no image part anywhere");
      return String(messages.find((m) => m.role === "tool")!.content);
    },
  },
  {
    provider: "openai-responses",
    model: "gpt-4.1",
    check: (body) => {
      const output = (body.input as Part[]).find((i) => i.type === "function_call_output")!
        .output as Part[];
      equal(output[0].type, "input_text");
      equal(output[1].type, "input_image");
      equal(output[1].image_url, DATA_URL);
    },
    text: (body) =>
      String((body.input as Part[]).find((i) => i.type === "function_call_output")!.output),
  },
];

for (const api of APIS) {
  Deno.test(`tern run: read of an image file sends the image to ${api.provider} in the tool result, stored by hash`, async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeFile(join(ws.dir, "shot.png"), PNG);
      await withScriptedServer([READ_SHOT, { text: "a dot" }], async (server) => {
        const env = {
          TERN_HOME: ws.home,
          HOME: ws.home,
          OPENAI_API_KEY: "k",
          ANTHROPIC_API_KEY: "k",
        };
        const run = await runTern([
          "run",
          "--provider",
          api.provider,
          "--base-url",
          server.baseUrl,
          "--model",
          api.model,
          "-o",
          "json",
          "what is in shot.png?",
        ], { cwd: ws.dir, env });
        equal(run.code, 0, run.stderr);
        equal(server.requests.length, 2);
        api.check(server.requests[1].body);

        const sessionPath = JSON.parse(run.stdout).sessionPath as string;
        const text = await Deno.readTextFile(sessionPath);
        ok(!text.includes(PNG_BASE64), "the image is not inline in the session");
        const hash = await sha256(PNG);
        ok(text.includes(hash), "the tool result's entry names the image by its hash");
        equal((await Deno.readFile(join(sessionPath, "..", "images", hash))).length, PNG.length);
      }, { chunkDelayMs: 0 });
    } finally {
      await ws.cleanup();
    }
  });

  Deno.test(`tern run: read of an image file gives ${api.provider} a model without images a text note`, async () => {
    const ws = await tempWorkspace();
    try {
      await Deno.writeFile(join(ws.dir, "shot.png"), PNG);
      await withScriptedServer([READ_SHOT, { text: "cannot see" }], async (server) => {
        const env = {
          TERN_HOME: ws.home,
          HOME: ws.home,
          OPENAI_API_KEY: "k",
          ANTHROPIC_API_KEY: "k",
        };
        const run = await runTern([
          "run",
          "--provider",
          api.provider,
          "--base-url",
          server.baseUrl,
          "--model",
          "some-text-model",
          "-o",
          "stream-json",
          "what is in shot.png?",
        ], { cwd: ws.dir, env });
        equal(run.code, 0, run.stderr);
        // The events name the image by hash; its bytes are in no event line.
        ok(run.stdout.includes('"tool_end"'), run.stdout);
        ok(!run.stdout.includes(PNG_BASE64), "no image bytes in the event stream");
        const body = server.requests[1].body;
        ok(!JSON.stringify(body).includes(PNG_BASE64), "no image bytes reach the model");
        match(api.text(body), /model "some-text-model" does not take images/);
      }, { chunkDelayMs: 0 });
    } finally {
      await ws.cleanup();
    }
  });
}

Deno.test("tern run: read of a symlink to an image outside the workspace sends no image", async () => {
  const ws = await tempWorkspace();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeFile(join(outside, "secret.png"), PNG);
    await Deno.symlink(join(outside, "secret.png"), join(ws.dir, "shot.png"));
    await withScriptedServer([READ_SHOT, { text: "ok" }], async (server) => {
      const env = { TERN_HOME: ws.home, HOME: ws.home, ANTHROPIC_API_KEY: "k" };
      const run = await runTern([
        "run",
        "--provider",
        "anthropic",
        "--base-url",
        server.baseUrl,
        "--model",
        "claude-sonnet-4-5",
        "what is in shot.png?",
      ], { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const body = JSON.stringify(server.requests[1].body);
      ok(!body.includes(PNG_BASE64), "the outside image's bytes never reach the model");
      match(body, /ERROR\[/);
    }, { chunkDelayMs: 0 });
  } finally {
    await ws.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
