/**
 * The module a code index worker thread starts (code_index_pool.ts): it answers each file
 * request with prepareIndexFile() until the pool ends it, parsing in a parser process of its
 * own.
 */
import { type FileResult, prepareIndexFile } from "./code_index_file.ts";
import { ParserProcess } from "./code_index_parser.ts";
import type { PoolInit, PoolReply, PoolRequest } from "./code_index_pool.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<PoolInit | PoolRequest>) => void) | null;
  postMessage(message: PoolReply, transfer: Transferable[]): void;
};

/** The pool's count of this worker's answers (PoolInit). */
let answered: Int32Array<ArrayBufferLike> = new Int32Array(1);

/**
 * The requests, in two lanes of one after another: while the parser process parses one lane's
 * file, this thread reads and prepares the other's. Never more than two files' texts in memory.
 */
const lanes = [Promise.resolve(), Promise.resolve()];
let lane = 0;

/** This worker's parser process; it ends with the worker (its stdin closes). */
const parser = new ParserProcess();

scope.onmessage = ({ data }) => {
  if ("answered" in data) {
    answered = new Int32Array(data.answered);
    return;
  }
  lanes[lane] = lanes[lane].then(() => answer(data)).catch(() => {});
  lane = (lane + 1) % lanes.length;
};

async function answer({ id, request }: PoolRequest): Promise<void> {
  let reply: PoolReply;
  let transfer: Transferable[] = [];
  try {
    const result: FileResult = await prepareIndexFile(request, parser);
    // The vectors move to the pool's thread rather than being copied.
    const buffer = "prepared" in result ? result.prepared.vectors?.buffer : undefined;
    if (buffer instanceof ArrayBuffer) transfer = [buffer];
    reply = { id, result };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  try {
    scope.postMessage(reply, transfer);
  } catch (error) {
    // A result that cannot be sent is still answered, as the error it is.
    scope.postMessage({ id, error: `Cannot send the result: ${String(error)}` }, []);
  }
  Atomics.add(answered, 0, 1);
}
