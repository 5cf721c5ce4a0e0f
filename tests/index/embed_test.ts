import { equal, ok, throws } from "node:assert/strict";
import { cosine, EMBEDDING_DIMENSIONS, embedText } from "../../src/index/embed.ts";
import { identifierKey, queryWords, splitWords } from "../../src/index/words.ts";

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

Deno.test("embedText() returns a unit vector of the default length, the same each time", () => {
  const vector = embedText("export function parseArgs(argv)");
  equal(vector.length, EMBEDDING_DIMENSIONS);
  ok(Math.abs(norm(vector) - 1) < 1e-5);
  equal(cosine(vector, embedText("export function parseArgs(argv)")), 1);
  equal(embedText("x", 64).length, 64);
});

Deno.test("embedText() maps camelCase and snake_case spellings to one vector", () => {
  ok(Math.abs(cosine(embedText("parseArgs"), embedText("parse_args")) - 1) < 1e-6);
  ok(Math.abs(cosine(embedText("HTTPServer"), embedText("http-server")) - 1) < 1e-6);
});

Deno.test("embedText() puts related words nearer than unrelated ones", () => {
  const query = embedText("parsing arguments");
  ok(cosine(query, embedText("parseArgs")) > cosine(query, embedText("renderTable")));
  ok(cosine(query, embedText("argument parser")) > cosine(query, embedText("socket timeout")));
});

Deno.test("cosine() is symmetric, 0 for an empty text and refuses lengths that differ", () => {
  const a = embedText("read file"), b = embedText("write file");
  equal(cosine(a, b), cosine(b, a));
  equal(cosine(a, embedText("!!!")), 0);
  ok(norm(embedText("")) === 0);
  throws(() => cosine(a, embedText("read", 64)), RangeError);
  ok(Math.abs(cosine(a, a.map((value) => -value)) + 1) < 1e-6);
});

Deno.test("splitWords() splits camelCase, PascalCase, acronyms, snake_case and digits", () => {
  equal(
    splitWords("parseArgs parse_args HTTPServer2 kebab-case Über").join(" "),
    "parse args parse args http server 2 kebab case über",
  );
  equal(identifierKey("Parse_Args"), identifierKey("parseArgs"));
  equal(queryWords("where is the parseArgs").join(" "), "parse args");
  equal(queryWords("what is it").join(" "), "what is it");
});
