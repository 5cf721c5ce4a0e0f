/**
 * The serving side of a JsonLineProcess (json_line_process.ts): tern's helper gives up every
 * access it has but reading (which a packaged build, carrying its files, gives up too), loads
 * what it needs, prints `{"ready":true}`, then answers each JSON line of stdin with one line,
 * and ends when stdin does or after an answer marked `last`.
 */
import { LineSplitter } from "./line_splitter.ts";
import { packaging } from "./packaging.ts";

/**
 * Serves `answer` on stdin and stdout as the module comment says; `load` runs before `ready`,
 * with read access (taken away after it when `readAfterLoad` is false). An answer whose line
 * would pass `tooLong.maxChars` characters is sent as `tooLong.instead` of it, given that
 * line's length. Never returns: the process exits 0 at the end.
 */
export async function serveJsonLines<Answer extends object>(
  answer: (line: string) => Promise<Answer>,
  options: {
    load?: () => Promise<unknown>;
    readAfterLoad?: boolean;
    tooLong?: { maxChars: number; instead: (answer: Answer, chars: number) => Answer };
  } = {},
): Promise<never> {
  // A compiled binary runs with its own permissions: it needs none of them here. From a source
  // tree its files are read from node_modules, all the read access it was given.
  for (const name of ["write", "net", "env", "run", "sys", "ffi"] as const) {
    Deno.permissions.revokeSync({ name });
  }
  if (packaging().kind !== "tree") Deno.permissions.revokeSync({ name: "read" });
  await options.load?.();
  if (options.readAfterLoad === false) Deno.permissions.revokeSync({ name: "read" });
  const encoder = new TextEncoder();
  // A write to a pipe may take only part of a long line: the rest goes after it, in order.
  const send = async (line: string) => {
    const bytes = encoder.encode(`${line}\n`);
    for (let sent = 0; sent < bytes.length;) sent += await Deno.stdout.write(bytes.subarray(sent));
  };
  const tooLong = options.tooLong;
  const lineOf = (answered: Answer) => {
    const line = JSON.stringify(answered);
    if (tooLong === undefined || line.length <= tooLong.maxChars) return line;
    return JSON.stringify(tooLong.instead(answered, line.length));
  };
  await send(JSON.stringify({ ready: true }));
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  reading: for await (const bytes of Deno.stdin.readable) {
    for (const line of splitter.push(decoder.decode(bytes, { stream: true }))) {
      const answered = await answer(line);
      await send(lineOf(answered));
      if ("last" in answered) break reading;
    }
  }
  Deno.exit(0);
}
