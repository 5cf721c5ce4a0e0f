/**
 * Retrieval quality of the code index (issue 22, part 5): `deno run -A bench/index_eval.ts`.
 *
 * The CodeSearchNet method on a real JavaScript code base that ships its source on npm
 * (lodash-es, installed by bench/_npm_package.ts into a cache outside the repository): each
 * documented function's doc summary (its JSDoc's first paragraph) is a query whose expected
 * answer is that function. So that a query cannot find itself, every `/** … *\/` comment is
 * blanked (replaced by as many line breaks, so line numbers and chunk ids stay) in the copy that
 * is indexed and that ripgrep searches: neither sees any doc text. A code span in a summary that
 * names the function itself (`_.chunk` for `chunk`) is dropped from its query, and summaries of
 * fewer than three words, or shared by several functions, make no pair.
 *
 * Signals, each over the same index: BM25 alone (FTS5 only), embeddings alone (cosine only),
 * hybrid (rank.ts's default weights), and ripgrep: `rg -i -F -o` with the query's words as
 * patterns (the same words the index searches for), files ranked by how many distinct words they
 * contain, then by matches.
 * The index is scored at the function (the target chunk must be returned) and at the file (a
 * chunk of the target's file); ripgrep finds files, so it is scored at the file only. Reports
 * MRR@10 and recall@10 to bench/results/index_eval.md and .json. Exits 1 when hybrid does not
 * beat each single signal.
 */
import { dirname, join } from "node:path";
import { chunkFile } from "../src/index/chunker.ts";
import { IndexStore } from "../src/index/store.ts";
import { DEFAULT_RANK_WEIGHTS, type RankWeights } from "../src/index/rank.ts";
import { identifierKey, queryWords } from "../src/index/words.ts";
import { indexWorkspace } from "../src/harness/code_index.ts";
import { installPackage, listFiles } from "./_npm_package.ts";

const PACKAGE = { name: "lodash-es", version: "4.17.21" };
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");
const RESULTS = join(ROOT, "bench", "results");
const K = 10;
const MIN_PAIRS = 300;

interface Pair {
  query: string;
  path: string;
  symbol: string;
  id: string;
}

interface Score {
  mrr: number;
  recall: number;
}

const NO_KIND = { FUNCTION: 0, METHOD: 0, CLASS: 0, INTERFACE: 0, FILE: 0, WINDOW: 0 };
const SIGNALS: Record<string, RankWeights> = {
  "BM25 alone": {
    ...DEFAULT_RANK_WEIGHTS,
    bm25: 1,
    vector: 0,
    exactSymbol: 0,
    symbolWords: 0,
    vectorFloor: 2,
    kind: NO_KIND,
  },
  "embeddings alone": {
    ...DEFAULT_RANK_WEIGHTS,
    bm25: 0,
    vector: 1,
    exactSymbol: 0,
    symbolWords: 0,
    vectorFloor: -1,
    kind: NO_KIND,
  },
  "hybrid (default weights)": { ...DEFAULT_RANK_WEIGHTS },
};

/** The first paragraph of a doc comment, without code spans that name `symbol` itself. */
export function summary(doc: string, symbol: string): string {
  const paragraph: string[] = [];
  for (const line of doc.split("\n")) {
    if (line.trim() === "" || line.trim().startsWith("@")) break;
    paragraph.push(line.trim());
  }
  const own = identifierKey(symbol.split(".").pop() ?? symbol);
  return paragraph.join(" ")
    .replace(/`([^`]*)`/g, (_, span: string) => identifierKey(span) === own ? "" : span)
    .replace(/\s+/g, " ")
    .trim();
}

/** `text` with each `/** … *\/` comment replaced by its line breaks. */
export function blankDocComments(text: string): string {
  return text.replace(/\/\*\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ""));
}

async function buildCorpus(source: string, work: string): Promise<Pair[]> {
  const byQuery = new Map<string, Pair[]>();
  for (const path of await listFiles(source)) {
    if (!path.endsWith(".js")) continue;
    const text = await Deno.readTextFile(join(source, path));
    for (const chunk of (await chunkFile(path, text)).chunks) {
      if (chunk.kind !== "FUNCTION" && chunk.kind !== "METHOD") continue;
      const query = summary(chunk.doc, chunk.symbol);
      if (queryWords(query).length < 3) continue;
      const pair = { query, path, symbol: chunk.symbol, id: chunk.id };
      byQuery.set(query, [...byQuery.get(query) ?? [], pair]);
    }
    await Deno.mkdir(dirname(join(work, path)), { recursive: true });
    await Deno.writeTextFile(join(work, path), blankDocComments(text));
  }
  return [...byQuery.values()].filter((pairs) => pairs.length === 1).map((pairs) => pairs[0]);
}

function score(ranks: (number | undefined)[]): Score {
  const found = ranks.filter((rank): rank is number => rank !== undefined && rank <= K);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    mrr: round(found.reduce((sum, rank) => sum + 1 / rank, 0) / ranks.length),
    recall: round(found.length / ranks.length),
  };
}

/**
 * Files of `work` ranked for `query` by ripgrep (one `rg -i -F -o` run with each query word as a
 * pattern): by distinct query words present, then by matches.
 */
async function ripgrep(work: string, query: string): Promise<string[]> {
  const words = queryWords(query);
  const output = await new Deno.Command("rg", {
    args: [
      "-i",
      "-F",
      "-o",
      "--no-messages",
      "--no-line-number",
      "--with-filename",
      ...words.flatMap((word) => ["-e", word]),
      ".",
    ],
    cwd: work,
    stdout: "piped",
    stderr: "null",
  }).output();
  const perFile = new Map<string, { words: Set<string>; matches: number }>();
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const colon = line.lastIndexOf(":");
    if (colon < 0) continue;
    const path = line.slice(0, colon).replace(/^\.\//, "");
    const entry = perFile.get(path) ?? { words: new Set(), matches: 0 };
    entry.words.add(line.slice(colon + 1).toLowerCase());
    entry.matches++;
    perFile.set(path, entry);
  }
  return [...perFile].sort((a, b) =>
    b[1].words.size - a[1].words.size || b[1].matches - a[1].matches ||
    a[0].localeCompare(b[0])
  ).map(([path]) => path);
}

function rankOf(list: string[], wanted: string): number | undefined {
  const index = list.slice(0, K).indexOf(wanted);
  return index < 0 ? undefined : index + 1;
}

async function main(): Promise<number> {
  const source = await installPackage(PACKAGE.name, PACKAGE.version);
  const work = await Deno.makeTempDir({ prefix: "tern-index-eval-" });
  try {
    const pairs = await buildCorpus(source, work);
    if (pairs.length < MIN_PAIRS) {
      throw new Error(`Cannot evaluate: only ${pairs.length} pairs, at least ${MIN_PAIRS} needed`);
    }
    console.error(`${pairs.length} pairs; indexing ${work}`);
    const indexFile = join(work, ".index", "index.sqlite");
    const built = await indexWorkspace(work, indexFile);
    const { store } = IndexStore.open(indexFile);
    const rows: { signal: string; level: string; score: Score }[] = [];
    try {
      for (const [signal, weights] of Object.entries(SIGNALS)) {
        const chunkRanks: (number | undefined)[] = [];
        const fileRanks: (number | undefined)[] = [];
        for (const pair of pairs) {
          const hits = store.search(pair.query, { limit: K, weights });
          chunkRanks.push(rankOf(hits.map((hit) => hit.chunk.id), pair.id));
          const files = [...new Set(hits.map((hit) => hit.chunk.path))];
          fileRanks.push(rankOf(files, pair.path));
        }
        console.error(`${signal} done`);
        rows.push({ signal, level: "function", score: score(chunkRanks) });
        rows.push({ signal, level: "file", score: score(fileRanks) });
      }
    } finally {
      store.close();
    }
    const rgRanks: (number | undefined)[] = [];
    for (const pair of pairs) rgRanks.push(rankOf(await ripgrep(work, pair.query), pair.path));
    rows.push({ signal: "ripgrep", level: "file", score: score(rgRanks) });

    const hybrid = rows.filter((row) => row.signal.startsWith("hybrid"));
    const beats = rows.filter((row) => !row.signal.startsWith("hybrid")).every((row) => {
      const own = hybrid.find((h) => h.level === row.level);
      return own !== undefined && own.score.mrr > row.score.mrr &&
        own.score.recall > row.score.recall;
    });
    const report = {
      package: `${PACKAGE.name}@${PACKAGE.version}`,
      pairs: pairs.length,
      files: built.indexed,
      chunks: built.chunks,
      k: K,
      rows,
      hybridBeatsEachSignal: beats,
      examples: pairs.slice(0, 5).map(({ query, symbol, path }) => ({ query, symbol, path })),
    };
    await Deno.mkdir(RESULTS, { recursive: true });
    await Deno.writeTextFile(
      join(RESULTS, "index_eval.json"),
      JSON.stringify(report, null, 2) + "\n",
    );
    await Deno.writeTextFile(join(RESULTS, "index_eval.md"), markdown(report));
    console.log(markdown(report));
    return beats ? 0 : 1;
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

function markdown(report: {
  package: string;
  pairs: number;
  files: number;
  chunks: number;
  rows: { signal: string; level: string; score: Score }[];
  hybridBeatsEachSignal: boolean;
  examples: { query: string; symbol: string; path: string }[];
}): string {
  const lines = [
    "# Code index retrieval quality",
    "",
    "Written by `deno run -A bench/index_eval.ts` (do not edit). CodeSearchNet method: each",
    `documented function's JSDoc summary of ${report.package} is a query, the function its answer;`,
    "doc comments are blanked in the indexed and grepped copy. See the script's header.",
    "",
    `${report.pairs} query pairs over ${report.files} files (${report.chunks} chunks).`,
    "",
    `| signal | level | MRR@${K} | recall@${K} |`,
    "|---|---|---|---|",
    ...report.rows.map((row) =>
      `| ${row.signal} | ${row.level} | ${row.score.mrr.toFixed(3)} | ${
        row.score.recall.toFixed(3)
      } |`
    ),
    "",
    `Hybrid beats each single signal at its level: ${report.hybridBeatsEachSignal ? "yes" : "NO"}.`,
    "",
    "Example pairs:",
    "",
    ...report.examples.map((example) =>
      `- "${example.query}" → \`${example.symbol}\` (${example.path})`
    ),
    "",
  ];
  return lines.join("\n");
}

if (import.meta.main) Deno.exit(await main());
