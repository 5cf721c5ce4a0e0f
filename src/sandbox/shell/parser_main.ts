/**
 * The shell parser process (see parser_process.ts): tree-sitter parses command lines here, not
 * in tern's process. It loads the grammar, prints `{"ready":true}`, then reads one command per
 * JSON line on stdin (`ShellParseRequest`) and answers each with one JSON line
 * (`ShellParseAnswer`). It reads nothing once loaded. It ends when stdin does; after a failure
 * (tree-sitter's runtime, once it aborted, cannot be used again in this process); and once the
 * runtime's memory grew past {@link KEEP_MEMORY_BYTES} (wasm memory never shrinks: a new process
 * starts small).
 */
import { serveJsonLines } from "../../core/json_line_serve.ts";
import { runtimeMemoryBytes, WASM_MEMORY_MAX_BYTES } from "../../index/_grammars.ts";
import { loadBashParser } from "./_tree_sitter.ts";
import { analyzeShellHere } from "./parse.ts";
import type { ShellParseAnswer, ShellParseRequest } from "./parser_process.ts";

const MIB = 1024 * 1024;
/** The runtime's memory past which the process ends after its answer. */
const KEEP_MEMORY_BYTES = 64 * MIB;

await serveJsonLines(answerLine, { load: loadBashParser, readAfterLoad: false });

async function answerLine(line: string): Promise<ShellParseAnswer> {
  try {
    const request = JSON.parse(line) as ShellParseRequest;
    const analysis = await analyzeShellHere(request.command, request.budgetMs);
    return runtimeMemoryBytes() > KEEP_MEMORY_BYTES ? { analysis, last: true } : { analysis };
  } catch (error) {
    // What tree-sitter does when an allocation would pass its memory cap.
    const why = error instanceof WebAssembly.RuntimeError && /^Aborted\(/.test(error.message)
      ? `its parse needed more than tree-sitter's ${WASM_MEMORY_MAX_BYTES / MIB} MiB; ` +
        "split it into smaller commands"
      : error instanceof Error
      ? error.message
      : String(error);
    return { analysis: { ok: false, error: `Cannot parse shell command: ${why}` }, last: true };
  }
}
