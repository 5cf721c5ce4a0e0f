import { deepEqual, equal } from "node:assert/strict";
import { LineOutput, MAX_HELD_BYTES, MAX_WAITING_BYTES } from "../../src/cli/rpc/output.ts";

Deno.test("LineOutput writes in order, and leaves out only progress lines while many wait", async () => {
  const written: string[] = [];
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => release = resolve);
  const decoder = new TextDecoder();
  // A client that reads nothing until released.
  const output = new LineOutput({
    write: async (bytes) => {
      await held;
      written.push(decoder.decode(bytes));
      return bytes.length;
    },
  });
  output.write("first\n");
  const progress = "p".repeat(1024 * 1024) + "\n";
  for (let i = 0; i < 8; i++) output.write(progress, true);
  output.write("response\n");
  equal(output.dropped, 8 - Math.floor(MAX_WAITING_BYTES / progress.length));
  release!();
  await output.drained();
  equal(written[0], "first\n");
  equal(written.at(-1), "response\n");
  deepEqual(
    written.slice(1, -1).map((line) => line.length),
    Array(8 - output.dropped).fill(progress.length),
  );
});

Deno.test("LineOutput stops writing once the reader went away", async () => {
  let calls = 0;
  const output = new LineOutput({
    write: () => {
      calls++;
      return Promise.reject(new Deno.errors.BrokenPipe("gone"));
    },
  });
  output.write("one\n");
  await output.drained();
  output.write("two\n");
  await output.drained();
  equal(calls, 1);
});

Deno.test("LineOutput.room() waits while more than MAX_HELD_BYTES wait, and not after", async () => {
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => release = resolve);
  const output = new LineOutput({
    write: async (bytes) => {
      await held;
      return bytes.length;
    },
  });
  const answer = "a".repeat(1024 * 1024) + "\n";
  for (let i = 0; i * answer.length <= MAX_HELD_BYTES; i++) output.write(answer);
  let roomy = false;
  const room = output.room().then(() => roomy = true);
  await new Promise((resolve) => setTimeout(resolve, 50));
  equal(roomy, false);
  release!();
  await room;
  await output.drained();
  equal(roomy, true);
  await output.room();
});
