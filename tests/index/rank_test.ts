import { deepEqual, equal, ok } from "node:assert/strict";
import { DEFAULT_RANK_WEIGHTS, rank } from "../../src/index/rank.ts";
import { IndexStore } from "../../src/index/store.ts";
import { chunk, file, tempIndex } from "./_fixtures.ts";

const CORPUS = [
  file("src/args.ts", [
    chunk("src/args.ts", "FUNCTION", "parseArgs", {
      signature: "export function parseArgs(argv: string[]): Options",
      doc: "Reads flags from the command line.",
      text: "export function parseArgs(argv: string[]): Options {\n" +
        "  const options = defaults();\n  for (const flag of readFlags(argv)) apply(options, flag);\n" +
        "  validate(options);\n  return options;\n}",
    }),
  ]),
  file("tools/cli.py", [
    chunk("tools/cli.py", "FUNCTION", "parse_args", {
      signature: "def parse_args(argv):",
      text: "def parse_args(argv):\n    return parser.parse_args(argv)",
    }),
  ], { language: "python" }),
  file("src/help.ts", [
    chunk("src/help.ts", "FUNCTION", "formatHelp", {
      signature: "export function formatHelp(parsed: ReturnType<typeof parseArgs>): string",
      doc: "The help text of parseArgs: call parseArgs first, parseArgs knows the args.",
      text: "formatHelp(parseArgs(argv)); // parseArgs args",
    }),
  ]),
  file("src/net.ts", [
    chunk("src/net.ts", "FUNCTION", "fetchUrl", {
      signature: "export async function fetchUrl(url: string): Promise<Response>",
      doc: "Downloads a web page over HTTP.",
      text: "export async function fetchUrl(url: string) { return await fetch(url); }",
    }),
  ]),
  file("README.md", [
    chunk("README.md", "WINDOW", "README.md", {
      endLine: 30,
      text: "Run tern with flags; the command line is parsed before anything else.",
    }),
  ], { language: "text" }),
];

function searchCorpus(query: string, limit = 5): string[] {
  const { dir, file: path } = tempIndex();
  const { store } = IndexStore.open(path);
  try {
    for (const chunked of CORPUS) store.replaceFile(chunked);
    return store.search(query, { limit }).map((hit) => hit.chunk.symbol);
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("IndexStore.search() ranks the exact identifier above a doc that mentions it", () => {
  const symbols = searchCorpus("parseArgs");
  deepEqual(symbols.slice(0, 2).sort(), ["parseArgs", "parse_args"]);
  ok(symbols.indexOf("formatHelp") > 1, symbols.join(", "));
});

Deno.test("IndexStore.search() finds parse_args and parseArgs for either spelling", () => {
  deepEqual(searchCorpus("parse_args").slice(0, 2).sort(), ["parseArgs", "parse_args"]);
  deepEqual(searchCorpus("ParseArgs").slice(0, 2).sort(), ["parseArgs", "parse_args"]);
});

Deno.test("IndexStore.search() answers a natural-language question", () => {
  equal(searchCorpus("how is a web page downloaded over http")[0], "fetchUrl");
  equal(searchCorpus("where are the flags of the command line read")[0], "parseArgs");
});

Deno.test("IndexStore.search() returns nothing for an empty query and cuts to the limit", () => {
  deepEqual(searchCorpus("  !!  "), []);
  equal(searchCorpus("parse args", 1).length, 1);
});

Deno.test("rank() lets the symbol boost outweigh a better BM25 score of a doc mention", () => {
  const named = chunk("a.ts", "FUNCTION", "parseArgs");
  const mention = chunk("b.ts", "FUNCTION", "formatHelp", { doc: "see parseArgs" });
  const hits = rank("parseArgs", [
    { chunk: mention, bm25: -8, cosine: 0.2 },
    { chunk: named, bm25: -4, cosine: 0.2 },
  ], { limit: 10 });
  deepEqual(hits.map((hit) => hit.chunk.symbol), ["parseArgs", "formatHelp"]);
});

Deno.test("rank() follows the weights it is given", () => {
  const named = chunk("a.ts", "FUNCTION", "parseArgs");
  const mention = chunk("b.ts", "FUNCTION", "formatHelp");
  const textOnly = { ...DEFAULT_RANK_WEIGHTS, exactSymbol: 0, symbolWords: 0 };
  const hits = rank("parseArgs", [
    { chunk: named, bm25: -4, cosine: 0 },
    { chunk: mention, bm25: -8, cosine: 0 },
  ], { limit: 10, weights: textOnly });
  deepEqual(hits.map((hit) => hit.chunk.symbol), ["formatHelp", "parseArgs"]);
  equal(hits[0].score, 1 + DEFAULT_RANK_WEIGHTS.kind.FUNCTION);
});

Deno.test("rank() puts a declaration before a line window of equal text score", () => {
  const window = chunk("a.md", "WINDOW", "a.md");
  const fn = chunk("b.ts", "FUNCTION", "loadConfig");
  const hits = rank("config loading", [
    { chunk: window, bm25: -2, cosine: 0.1 },
    { chunk: fn, bm25: -2, cosine: 0.1 },
  ], { limit: 10 });
  deepEqual(hits.map((hit) => hit.chunk.kind), ["FUNCTION", "WINDOW"]);
});
