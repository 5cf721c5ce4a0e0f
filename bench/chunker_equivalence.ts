/**
 * Checks that the chunker, the word splitter and the local embedding of this checkout give the
 * same output as those of another revision (default `main`), file by file:
 * `deno run -A bench/chunker_equivalence.ts [--base REV] [FOLDER ...]`.
 *
 * Reads every file of each FOLDER (default: the date-fns workspace of bench/index_speed.ts) and
 * the sources the chunker's tests cut. Each side runs in a process of its own (`--dump SRC OUT`):
 * it chunks every file with SRC/index/chunker.ts and, as IndexStore.replaceFile() does, splits
 * each chunk's symbol, last name part, signature, doc and text into words and embeds them. The
 * two outputs are compared exactly: chunks, relations, word lists and the vectors' bytes.
 * Exits 1 on the first file that differs, printing both sides.
 */
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { type CorpusFile, DATE_FNS, testFixtures, workspaceFiles } from "./_chunk_corpus.ts";

const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");

interface Modules {
  chunkFile(path: string, text: string): Promise<{ chunks: { symbol: string }[] }>;
  splitWords(text: string): string[];
  embedWords(words: string[]): Float32Array;
}

/** The corpus: each folder's files (prefixed by the folder's index) and the test sources. */
export async function corpus(folders: string[]): Promise<CorpusFile[]> {
  const out: CorpusFile[] = [];
  for (const [index, folder] of folders.entries()) {
    for (const file of await workspaceFiles(folder)) {
      out.push({ path: `${index}/${file.path}`, text: file.text });
    }
  }
  return [...out, ...await testFixtures(ROOT)];
}

/** Imports the chunker, splitter and embedding of the source tree `src`. */
export async function modulesOf(src: string): Promise<Modules> {
  const chunker = await import(join(src, "index", "chunker.ts"));
  const words = await import(join(src, "index", "words.ts"));
  const embed = await import(join(src, "index", "embed.ts"));
  return {
    chunkFile: chunker.chunkFile,
    splitWords: words.splitWords,
    embedWords: embed.embedWords,
  };
}

async function dump(src: string, out: string, folders: string[]): Promise<void> {
  const { chunkFile, splitWords, embedWords } = await modulesOf(src);
  const file = await Deno.open(out, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  for (const { path, text } of await corpus(folders)) {
    const chunked = await chunkFile(path, text);
    const words = chunked.chunks.map((chunk) => {
      const c = chunk as unknown as Record<string, string>;
      const split = {
        symbol: splitWords(c.symbol),
        last: splitWords(c.symbol.split(".").pop() ?? ""),
        signature: splitWords(c.signature),
        doc: splitWords(c.doc),
        text: splitWords(c.text),
      };
      const vector = embedWords([...split.symbol, ...split.signature, ...split.doc, ...split.text]);
      const bytes = new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
      return { ...split, vector: createHash("sha256").update(bytes).digest("hex") };
    });
    await file.write(encoder.encode(JSON.stringify({ chunked, words }) + "\n"));
  }
  file.close();
}

async function runDump(src: string, out: string, folders: string[]): Promise<void> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--dump", src, out, ...folders],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`Cannot chunk with "${src}": the child process failed`);
}

async function baseSource(rev: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tern-chunker-base-" });
  const archive = new Deno.Command("sh", {
    args: ["-c", `git -C "$1" archive "$2" src | tar -x -C "$3"`, "sh", ROOT, rev, dir],
  });
  if (!(await archive.output()).success) throw new Error(`Cannot extract src/ of "${rev}"`);
  return join(dir, "src");
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "--dump") {
    await dump(args[1], args[2], args.slice(3));
    return 0;
  }
  let rev = "main";
  if (args[0] === "--base") {
    rev = args[1];
    args = args.slice(2);
  }
  const folders = args.length ? args : [DATE_FNS];
  const base = await baseSource(rev);
  const outs = [join(dirname(base), "base.jsonl"), join(dirname(base), "head.jsonl")];
  await Promise.all([
    runDump(base, outs[0], folders),
    runDump(join(ROOT, "src"), outs[1], folders),
  ]);
  const [old, now] = await Promise.all(
    outs.map(async (out) => (await Deno.readTextFile(out)).split("\n")),
  );
  let chunks = 0, relations = 0;
  for (let i = 0; i < Math.max(old.length, now.length); i++) {
    if (old[i] !== now[i]) {
      console.error(`Differs at file ${i + 1}:\n${rev}: ${old[i]}\nthis checkout: ${now[i]}`);
      return 1;
    }
    if (old[i]) {
      const line = JSON.parse(old[i]);
      chunks += line.chunked.chunks.length;
      relations += line.chunked.relations.length;
    }
  }
  await Deno.remove(dirname(base), { recursive: true });
  console.log(
    `Same output as ${rev} for ${
      old.length - 1
    } files (${chunks} chunks, ${relations} relations) ` +
      `of ${folders.join(", ")} and the test sources`,
  );
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
