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
 * with read access (taken away after it when `readAfterLoad` is false). Never returns: the
 * process exits 0 at the end.
 */
export async function serveJsonLines(
  answer: (line: string) => Promise<object>,
  options: { load?: () => Promise<unknown>; readAfterLoad?: boolean } = {},
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
  const send = async (line: object) => {
    await Deno.stdout.write(encoder.encode(`${JSON.stringify(line)}\n`));
  };
  await send({ ready: true });
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  reading: for await (const bytes of Deno.stdin.readable) {
    for (const line of splitter.push(decoder.decode(bytes, { stream: true }))) {
      const answered = await answer(line);
      await send(answered);
      if ("last" in answered) break reading;
    }
  }
  Deno.exit(0);
}
