/**
 * CPU cost of the chunker, the word splitter and the local embedding over a workspace, in one
 * process: `deno run -A bench/chunker_speed.ts [--src SRC] [FOLDER]`.
 *
 * Reads every file of FOLDER (default: the date-fns workspace of bench/index_speed.ts) first,
 * then, timed, does for each what the code index does before it writes: chunkFile(), and for
 * each chunk splitWords() of its symbol, last name part, signature, doc and text and
 * embedWords() of them. SRC (default: this checkout's src/) picks the source tree, so another
 * revision can be timed against this one. Prints one JSON line: files, chunks, wall ms and CPU
 * ms (user + system) of the timed part.
 */
import { cpuUsage } from "node:process";
import { dirname, join } from "node:path";
import { DATE_FNS, workspaceFiles } from "./_chunk_corpus.ts";
import { modulesOf } from "./chunker_equivalence.ts";

const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");

async function main(args: string[]): Promise<void> {
  let src = join(ROOT, "src");
  if (args[0] === "--src") {
    src = args[1];
    args = args.slice(2);
  }
  const files = await workspaceFiles(args[0] ?? DATE_FNS);
  const { chunkFile, splitWords, embedWords } = await modulesOf(src);
  await chunkFile("warm.ts", "export function warm() {}\n"); // loads the runtime and grammar
  const cpu = cpuUsage();
  const started = performance.now();
  let chunks = 0;
  for (const { path, text } of files) {
    const chunked = await chunkFile(path, text);
    for (const chunk of chunked.chunks as unknown as Record<string, string>[]) {
      const symbol = splitWords(chunk.symbol);
      splitWords(chunk.symbol.split(".").pop() ?? "");
      const signature = splitWords(chunk.signature);
      const doc = splitWords(chunk.doc);
      const text = splitWords(chunk.text);
      embedWords([...symbol, ...signature, ...doc, ...text]);
      chunks++;
    }
  }
  const ms = performance.now() - started;
  const used = cpuUsage(cpu);
  const cpuMs = Math.round((used.user + used.system) / 1000);
  console.log(JSON.stringify({ src, files: files.length, chunks, ms: Math.round(ms), cpuMs }));
}

if (import.meta.main) await main(Deno.args);
