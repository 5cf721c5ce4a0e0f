/**
 * chunkFile() calls that overlap, as an index worker's first files do while tree-sitter and its
 * grammars load: each file is parsed with its own language's grammar. Runs in a fresh process,
 * where nothing is loaded yet.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";

const ROOT = join(new URL(".", import.meta.url).pathname, "../..");

const SCRIPT = `
import { chunkFile } from ${JSON.stringify(`file://${ROOT}/src/index/chunker.ts`)};
const files = [
  ["a.ts", "export class Ballot { count(): number { return tally(1); } }\\nexport function tally(n: number) { return n; }\\n"],
  ["b.py", "class Ballot:\\n    def count(self):\\n        return tally(1)\\n\\ndef tally(n):\\n    return n\\n"],
  ["c.go", "package main\\n\\nfunc Tally(n int) int { return n }\\n\\nfunc Count() int { return Tally(1) }\\n"],
  ["d.rb", "class Ballot\\n  def count\\n    tally(1)\\n  end\\nend\\n"],
];
const shape = (c) => ({ language: c.language, chunks: c.chunks.map((x) => x.kind + " " + x.symbol), relations: c.relations.length });
const together = (await Promise.all(files.map(([p, t]) => chunkFile(p, t)))).map(shape);
const apart = [];
for (const [p, t] of files) apart.push(shape(await chunkFile(p, t)));
console.log(JSON.stringify({ together, apart }));
`;

Deno.test("chunkFile() calls that overlap while the grammars load each use their own grammar", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", join(ROOT, "deno.json"), SCRIPT],
    stdout: "piped",
    stderr: "piped",
  }).output();
  equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const { together, apart } = JSON.parse(new TextDecoder().decode(out.stdout));
  deepEqual(together.map((file: { language: string }) => file.language), [
    "typescript",
    "python",
    "go",
    "ruby",
  ]);
  deepEqual(together, apart);
});
