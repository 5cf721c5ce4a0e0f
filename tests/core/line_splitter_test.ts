import { deepEqual, equal, rejects } from "node:assert/strict";
import { LineSplitter, streamLines } from "../../src/core/line_splitter.ts";

function streamOf(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c));
}

async function all(stream: AsyncIterable<string>): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of stream) lines.push(line);
  return lines;
}

Deno.test("LineSplitter joins a line across chunks and splits several in one", () => {
  const splitter = new LineSplitter();
  deepEqual(splitter.push("ab"), []);
  equal(splitter.pending, 2);
  deepEqual(splitter.push("c\nd\n\ne"), ["abc", "d", ""]);
  equal(splitter.pending, 1);
  deepEqual(splitter.push("f"), []);
  equal(splitter.end(), "ef");
  equal(splitter.pending, 0);
  equal(splitter.end(), "");
});

Deno.test("LineSplitter.drop() lets go of the held line only", () => {
  const splitter = new LineSplitter();
  splitter.push("x".repeat(100));
  splitter.drop();
  equal(splitter.pending, 0);
  deepEqual(splitter.push("y\nz\n"), ["y", "z"]);
});

Deno.test("streamLines() reads a multi-megabyte line in small chunks whole, and UTF-8 split across chunks", async () => {
  const line = "é".repeat(5) + "x".repeat(5_000_000);
  const bytes = new TextEncoder().encode(`first\n${line}\nlast`);
  const chunks: Uint8Array[] = [];
  // 16 KB chunks, the first cut inside a two-byte "é".
  chunks.push(bytes.subarray(0, 7));
  for (let i = 7; i < bytes.length; i += 16_384) chunks.push(bytes.subarray(i, i + 16_384));
  const lines = await all(streamLines(streamOf(chunks)));
  deepEqual(lines.map((l) => l.length), [5, line.length, 4]);
  equal(lines[1], line);
});

Deno.test("streamLines() throws the limit's error once a line grows past it, after the lines before", async () => {
  const lines: string[] = [];
  const limit = { maxChars: 10, error: () => new RangeError("too long") };
  await rejects(async () => {
    for await (const line of streamLines(streamOf(["ok\n", "x".repeat(8), "x".repeat(8)]), limit)) {
      lines.push(line);
    }
  }, /too long/);
  deepEqual(lines, ["ok"]);
  // Ten characters are within it.
  deepEqual(await all(streamLines(streamOf(["y".repeat(10), "\n"]), limit)), ["y".repeat(10)]);
});
