/**
 * The restore process: tern's own process may not write the workspace (the launcher grants it
 * only tern's home and its temp folder), so a restore runs in a short-lived Deno process allowed
 * to read and write the workspace and nothing else: no network, no environment, no
 * subprocesses. The operations come in on stdin as JSON lines (`RestoreLine`, a file's content
 * in chunks after its write) and run in order, each as soon as it has come, through
 * `safe_files.ts` (inside the workspace only, never through a symlink); one JSON line comes back
 * with how many were done and the error that stopped the rest. A request that ends without its
 * end line (tern gave up sending) stops there, with an error.
 */
import type { RestoreAnswer, RestoreLine } from "./restore_ops.ts";
import {
  CUT_SHORT,
  removeEmptyFolders,
  removeSafely,
  writeFileSafely,
  writeLinkSafely,
} from "./safe_files.ts";

const answer: RestoreAnswer = { done: 0 };
const lines = readLines(Deno.stdin.readable);
try {
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(CUT_SHORT);
    return line.value;
  };
  const { workspace } = JSON.parse(await next()) as { workspace: string };
  if (typeof workspace !== "string") throw new Error("Cannot restore the files: no workspace");
  /** Paths removed: the folders they leave empty go once every file is back. */
  const removed: string[] = [];
  for (;;) {
    const op = JSON.parse(await next()) as RestoreLine;
    if ("end" in op) break;
    if (!("op" in op)) throw new Error("Cannot restore the files: a line is no operation");
    if (op.op === "remove") {
      await removeSafely(workspace, op.path);
      // Also when it was gone already (a rewind stopped partway, run again).
      removed.push(op.path);
    } else if (op.op === "link") await writeLinkSafely(workspace, op.path, op.target);
    else {
      // Content comes while the file is written: the process holds one chunk, not the file.
      const size = op.size;
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        for (let got = 0; got < size;) {
          const bytes = Uint8Array.fromBase64(await next());
          got += bytes.length;
          if (got > size) throw new Error(`Cannot restore "${op.path}": more bytes than told`);
          yield bytes;
        }
      };
      await writeFileSafely(workspace, op.path, chunks(), op.executable);
    }
    answer.done++;
  }
  await removeEmptyFolders(workspace, removed);
} catch (error) {
  answer.error = error instanceof Error ? error.message : String(error);
}
console.log(JSON.stringify(answer));
// Whatever else tern sends is not read: the process ends, and tern's writes end with it.
Deno.exit(0);

/**
 * The lines of `stream` (UTF-8, split at "\n"), without their ends. Each piece read is searched
 * once: a line of a megabyte coming in small pieces is not searched again with each.
 */
async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let parts: string[] = [];
  for await (const bytes of stream) {
    let text = decoder.decode(bytes, { stream: true });
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n")) {
      parts.push(text.slice(0, end));
      yield parts.join("");
      parts = [];
      text = text.slice(end + 1);
    }
    if (text !== "") parts.push(text);
  }
  const last = parts.join("") + decoder.decode();
  if (last !== "") yield last;
}
