/**
 * The code index's parser process (see code_index_parser.ts): tree-sitter runs here, not in
 * tern's process. It prints `{"ready":true}` once loaded, then reads one file per JSON line on
 * stdin (`ParserRequest`) and answers each with one JSON line (`ParserAnswer`). It ends when
 * stdin does; after a failure (tree-sitter's runtime, once it aborted, cannot be used again in
 * this process); and once the runtime's memory grew past {@link KEEP_MEMORY_BYTES} (wasm memory
 * never shrinks: a new process starts small).
 */
import { serveJsonLines } from "../core/json_line_serve.ts";
import { runtimeMemoryBytes, WASM_MEMORY_MAX_BYTES } from "../index/_grammars.ts";
import { chunkFile, windowedFile } from "../index/chunker.ts";
import type { ParserAnswer, ParserRequest } from "./code_index_parser.ts";

const MIB = 1024 * 1024;
/** The runtime's memory past which the process ends after its answer. */
const KEEP_MEMORY_BYTES = 128 * MIB;

await serveJsonLines(answerLine);

async function answerLine(line: string): Promise<ParserAnswer> {
  let request: ParserRequest | undefined;
  try {
    request = JSON.parse(line) as ParserRequest;
    const chunked = await chunkFile(request.path, request.text, request.hash);
    return runtimeMemoryBytes() > KEEP_MEMORY_BYTES ? { chunked, last: true } : { chunked };
  } catch (error) {
    // What tree-sitter does when an allocation would pass its memory cap.
    if (request && error instanceof WebAssembly.RuntimeError && /^Aborted\(/.test(error.message)) {
      const why = `its parse needed more than tree-sitter's ${WASM_MEMORY_MAX_BYTES / MIB} MiB`;
      return { chunked: windowedFile(request, why), last: true };
    }
    return { error: error instanceof Error ? error.message : String(error), last: true };
  }
}
