/**
 * The restore process: tern's own process may not write the workspace (the launcher grants it
 * only tern's home and its temp folder), so a restore runs in a short-lived Deno process allowed
 * to read and write the workspace and nothing else: no network, no environment, no
 * subprocesses. The operations come in on stdin as one JSON object and run in order through
 * `safe_files.ts` (inside the workspace only, never through a symlink); one JSON line comes back
 * with how many were done and the error that stopped the rest.
 */
import type { RestoreAnswer, RestoreRequest } from "./restore_ops.ts";
import { removeSafely, writeFileSafely, writeLinkSafely } from "./safe_files.ts";

const request = JSON.parse(await new Response(Deno.stdin.readable).text()) as RestoreRequest;
const answer: RestoreAnswer = { done: 0 };
try {
  for (const op of request.ops) {
    if (op.op === "remove") await removeSafely(request.workspace, op.path);
    else if (op.op === "link") await writeLinkSafely(request.workspace, op.path, op.target);
    else {
      const bytes = Uint8Array.fromBase64(op.data);
      await writeFileSafely(request.workspace, op.path, bytes, op.executable);
    }
    answer.done++;
  }
} catch (error) {
  answer.error = error instanceof Error ? error.message : String(error);
}
console.log(JSON.stringify(answer));
