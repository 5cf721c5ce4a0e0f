/**
 * The module a code index worker thread starts (code_index_pool.ts): it answers each file
 * request with prepareIndexFile() until the pool ends it.
 */
import { type FileResult, prepareIndexFile } from "./code_index_file.ts";
import type { PoolReply, PoolRequest } from "./code_index_pool.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<PoolRequest>) => void) | null;
  postMessage(message: PoolReply, transfer: Transferable[]): void;
};

scope.onmessage = async ({ data: { id, request } }) => {
  let result: FileResult;
  try {
    result = await prepareIndexFile(request);
  } catch (error) {
    scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) }, []);
    return;
  }
  // The vectors move to the pool's thread rather than being copied.
  const buffer = "prepared" in result ? result.prepared.vectors?.buffer : undefined;
  scope.postMessage({ id, result }, buffer instanceof ArrayBuffer ? [buffer] : []);
};
