/** Line mode's input reader: linear in a line's length, and a cap on one message. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { MAX_LINE_CHARS, readLines } from "../../src/cli/interactive/display.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

/** `chunks` as a byte stream. */
function stream(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((chunk) => encoder.encode(chunk)));
}

async function linesOf(chunks: string[], maxChars: number) {
  const lines: string[] = [];
  await readLines(stream(chunks), (line) => {
    lines.push(line);
    return Promise.resolve();
  }, { maxChars, tooLong: () => lines.push("<too long>") });
  return lines;
}

Deno.test("readLines() splits lines across chunks and drops those over maxChars", async () => {
  deepEqual(await linesOf(["a", "b\r\nc", "d\n", "\ne"], 10), ["ab", "cd", "", "e"]);
  deepEqual(
    await linesOf(["short\n", "x".repeat(8), "x".repeat(8), "y\nafter\n", "z".repeat(30)], 10),
    ["short", "<too long>", "after", "<too long>"],
  );
  deepEqual(await linesOf(["x".repeat(11) + "\nok"], 10), ["<too long>", "ok"]);
});

Deno.test("readLines() reads a 20 MB line in chunks in linear time", async () => {
  const chunk = "x".repeat(64 * 1024);
  const chunks = Array.from({ length: 320 }, () => chunk);
  const started = performance.now();
  const lines = await linesOf([...chunks, "\nnext\n"], 30 * 1024 * 1024);
  const elapsed = performance.now() - started;
  equal(lines.length, 2);
  equal(lines[0].length, chunk.length * chunks.length);
  equal(lines[1], "next");
  // Scanning the whole pending line at each chunk took seconds here.
  ok(elapsed < 2_000, `${elapsed} ms`);
});

Deno.test("tern in line mode refuses a message over MAX_LINE_CHARS and goes on with the next", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Answered." }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-test",
        NO_COLOR: "1",
      };
      const input = `${"y".repeat(MAX_LINE_CHARS + 1)}\nthe short one\n`;
      const run = await runTernWithInput([], input, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      match(
        run.stderr,
        /^tern: Skipped an input line of more than 4194304 characters, the most one message may have/m,
      );
      equal(server.requests.length, 1);
      equal(server.requests[0].modelRequest.messages.at(-1)!.content, "the short one");
      ok(run.stdout.includes("Answered."), run.stdout);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern refuses a message larger than the context window before sending it", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "Answered." }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-test",
        TERN_CONTEXT_WINDOW: "20000",
        NO_COLOR: "1",
      };
      const huge = "lorem ipsum dolor ".repeat(10_000);
      const refused =
        /Cannot send a message of about \d+ tokens: the model's context window holds 20000; put long text in a file/;
      const line = await runTernWithInput([], `${huge}\nthe short one\n`, { cwd: ws.dir, env });
      // The next line is still sent; the session exits as `tern run` would for the refused one.
      equal(line.code, 2, line.stderr);
      // Line mode wraps the notice at 100 columns.
      match(line.stdout.replace(/\n\s+/g, " "), refused);
      equal(server.requests.length, 1);
      equal(server.requests[0].modelRequest.messages.at(-1)!.content, "the short one");
      // A command-line argument has at most 128 KiB: a smaller window makes this one too long.
      const task = huge.slice(0, 90_000);
      const small = { ...env, TERN_CONTEXT_WINDOW: "10000" };
      const run = await runTernWithInput(["run", task], "", { cwd: ws.dir, env: small });
      equal(run.code, 2, run.stderr);
      match(run.stderr, new RegExp(`^tern: ${refused.source.replace("20000", "10000")}`, "m"));
      equal(server.requests.length, 1);
    });
  } finally {
    await ws.cleanup();
  }
});
