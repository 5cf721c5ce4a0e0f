/** Shared pieces of the session tests: temp homes and the fixture processes. */
import { dirname, join } from "node:path";

const FIXTURES = join(dirname(new URL(import.meta.url).pathname), "_fixtures");

/** A temporary TERN_HOME, removed by `cleanup()`. */
export async function tempHome(): Promise<{ home: string; cleanup(): Promise<void> }> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-sessions-" }));
  return { home, cleanup: () => Deno.remove(home, { recursive: true }) };
}

/** Starts `deno run` on a fixture with read and write permission and every stream piped. */
export function spawnFixture(name: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", "--allow-write", join(FIXTURES, name), ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs a fixture to its end with stdin closed. */
export async function runFixture(
  name: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", "--allow-write", join(FIXTURES, name), ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Reads `stream` as lines, calling `onLine` for each complete one; resolves at its end. */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let buffer = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf("\n")) !== -1) {
      onLine(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
    }
  }
}

/** A user message entry to append. */
export function userMessage(
  content: string,
): { type: "message"; message: { role: "user"; content: string } } {
  return { type: "message", message: { role: "user", content } };
}
