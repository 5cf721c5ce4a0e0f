/**
 * The crash-test writer: `append_loop.ts <file> <max>` opens the session, prints "ready", then
 * appends up to `max` message entries of varying size (some about 200 KB) as fast as it can,
 * printing each entry's id on its own line once `append` has returned. Then it waits on stdin,
 * so the test's SIGKILL can land anywhere: mid-write, between writes or while idle.
 */
import { SessionWriter } from "../../../src/session/store.ts";

const [path, max] = Deno.args;
const encoder = new TextEncoder();
const { writer } = await SessionWriter.open(path);

function print(line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

// Quotes, backslashes, newlines and non-ASCII text, so lines need escaping like real output.
const base = 'const s = "quoted \\\\ path";\n\tcafé — 日本語 ✓ {"json": [1, 2]}\n'.repeat(8000);

function size(): number {
  const roll = Math.random();
  if (roll < 0.1) return 150_000 + Math.floor(Math.random() * 100_000);
  if (roll < 0.3) return 2_000 + Math.floor(Math.random() * 18_000);
  return 50 + Math.floor(Math.random() * 2_000);
}

print("ready");
for (let i = 0; i < Number(max); i++) {
  const length = size();
  const start = Math.floor(Math.random() * (base.length - length));
  const entry = writer.append({
    type: "message",
    message: {
      role: "tool",
      toolCallId: `call_${i}`,
      name: "read",
      content: base.slice(start, start + length),
    },
  });
  print(entry.id);
}
for await (const _ of Deno.stdin.readable) {
  // Idle until killed.
}
writer.close();
