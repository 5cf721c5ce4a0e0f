/**
 * The shell parser process (see parser_process.ts): tree-sitter parses command lines here, not
 * in tern's process. It loads the grammar, prints `{"ready":true}`, then reads one command per
 * JSON line on stdin (`ShellParseRequest`) and answers each with one JSON line
 * (`ShellParseAnswer`, with the request's `id`). It reads nothing once loaded. It ends when
 * stdin does; after a failure (tree-sitter's runtime, once it aborted, cannot be used again in
 * this process); and once the runtime's memory grew past {@link KEEP_MEMORY_BYTES} (wasm memory
 * never shrinks: a new process starts small).
 */
import { serveJsonLines } from "../../core/json_line_serve.ts";
import { runtimeMemoryBytes, WASM_MEMORY_MAX_BYTES } from "../../index/_grammars.ts";
import { loadBashParser } from "./_tree_sitter.ts";
import { analyzeShellHere } from "./parse.ts";
import type { ShellAnalysis } from "./_analysis.ts";
import type { ShellParseAnswer, ShellParseRequest } from "./parser_process.ts";

const MIB = 1024 * 1024;
/** The runtime's memory past which the process ends after its answer. */
const KEEP_MEMORY_BYTES = 64 * MIB;
/**
 * The longest answer line sent, in characters. An analysis holds each command's text, so one of
 * nested substitutions grows with the square of its depth (10 KB, 1,000 deep: 12 MB), which tern
 * would have to read and hold: past this the command is refused instead.
 */
const MAX_ANSWER_CHARS = 8 * MIB;

type Analysed = Exclude<ShellParseAnswer, { ready: true }>;

await serveJsonLines<Analysed>(answerLine, {
  load: loadBashParser,
  readAfterLoad: false,
  tooLong: {
    maxChars: MAX_ANSWER_CHARS,
    instead: (answer, chars) => ({ ...answer, analysis: tooLong(chars) }),
  },
});

function tooLong(chars: number): ShellAnalysis {
  return {
    ok: false,
    error: `Cannot parse shell command: its analysis takes ${Math.ceil(chars / MIB)} MB, ` +
      `more than the ${MAX_ANSWER_CHARS / MIB} MB allowed; split it into smaller commands`,
  };
}

/** The characters of the text an analysis holds: its answer's length, near enough. */
function textChars(analysis: ShellAnalysis): number {
  if (!analysis.ok) return analysis.error.length;
  const sum = (texts: readonly string[]) => texts.reduce((total, text) => total + text.length, 0);
  let chars = sum(analysis.opaque) + sum(analysis.unseen);
  for (const command of analysis.commands) {
    chars += command.text.length + sum(command.argv) + sum(command.assignments) +
      sum(command.wrappers) + sum(command.redirects.flatMap(({ op, target }) => [op, target]));
  }
  return chars;
}

async function answerLine(line: string): Promise<Analysed> {
  let id = -1;
  try {
    const request = JSON.parse(line) as ShellParseRequest;
    id = request.id;
    const found = await analyzeShellHere(request.command, request.budgetMs);
    // Its line would be refused: this spares writing it out first (200 MB took seconds).
    const chars = textChars(found);
    const analysis = chars > MAX_ANSWER_CHARS ? tooLong(chars) : found;
    return runtimeMemoryBytes() > KEEP_MEMORY_BYTES
      ? { id, analysis, last: true }
      : { id, analysis };
  } catch (error) {
    // What tree-sitter does when an allocation would pass its memory cap.
    const why = error instanceof WebAssembly.RuntimeError && /^Aborted\(/.test(error.message)
      ? `its parse needed more than tree-sitter's ${WASM_MEMORY_MAX_BYTES / MIB} MiB; ` +
        "split it into smaller commands"
      : error instanceof RangeError && /call stack/i.test(error.message)
      ? "it is nested too deeply to analyse; split it into smaller commands"
      : error instanceof Error
      ? error.message
      : String(error);
    return { id, analysis: { ok: false, error: `Cannot parse shell command: ${why}` }, last: true };
  }
}
