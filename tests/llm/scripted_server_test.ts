import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createOpenAiChatProvider } from "../../src/llm/openai_chat.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import type { StreamEvent } from "../../src/llm/types.ts";

const SERVER_PATH = fileURLToPath(new URL("../support/scripted_server.ts", import.meta.url));

/** Reads lines from `stream` until one starts with `prefix`; returns it and the open reader. */
async function readLineStartingWith(
  stream: ReadableStream<Uint8Array>,
  prefix: string,
): Promise<{ line: string; reader: ReadableStreamDefaultReader<string> }> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  while (true) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`Output ended before a line starting with "${prefix}": ${buffered}`);
    buffered += value;
    const line = buffered.split("\n").find((l, i, all) =>
      i < all.length - 1 && l.startsWith(prefix)
    );
    if (line !== undefined) return { line, reader };
  }
}

Deno.test("scripted_server.ts as a program serves a script file and logs requests", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern_scripted_server_" });
  const script: ScriptedReply[] = [{
    text: "From a file.",
    toolCalls: [{ id: "t1", name: "ls", arguments: '{"path":"."}' }],
  }];
  const scriptPath = join(dir, "script.json");
  const logPath = join(dir, "requests.jsonl");
  await Deno.writeTextFile(scriptPath, JSON.stringify(script));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      SERVER_PATH,
      scriptPath,
      logPath,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let reader: ReadableStreamDefaultReader<string> | undefined;
  try {
    const listening = await readLineStartingWith(child.stdout, "LISTENING ");
    reader = listening.reader;
    const baseUrl = listening.line.slice("LISTENING ".length);
    assert.match(baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const provider = createOpenAiChatProvider({ baseUrl });
    const events: StreamEvent[] = [];
    for await (
      const event of provider.stream({
        model: "m",
        messages: [{ role: "user", content: "list" }],
        tools: [],
      })
    ) events.push(event);
    const last = events.at(-1);
    assert.equal(last?.type, "done");
    if (last?.type === "done") {
      assert.deepEqual(last.message, {
        role: "assistant",
        content: "From a file.",
        toolCalls: [{ id: "t1", name: "ls", arguments: '{"path":"."}' }],
      });
    }
    const logged = (await Deno.readTextFile(logPath)).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(logged.length, 1);
    assert.equal(logged[0].body.messages[0].content, "list");
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reader?.cancel();
    await Deno.remove(dir, { recursive: true });
  }
});
