/** The chunker over hostile source: cleaning what it keeps takes time in proportion to its length. */
import { ok } from "node:assert/strict";
import { chunkFile } from "../../src/index/chunker.ts";

Deno.test("a long run of stars in a doc comment is cleaned in linear time", async () => {
  // 80,000 stars not followed by "/": each start in the run was matched to its end and back.
  const stars = "*".repeat(80_000);
  for (
    const [path, text] of [
      ["a.py", `# ${stars} x\ndef harbor_toll():\n    return 1\n`],
      ["a.ts", `/* ${stars} x */\nexport function harborToll() {}\n`],
    ]
  ) {
    const started = performance.now();
    const chunked = await chunkFile(path, text, undefined, 60_000);
    const took = performance.now() - started;
    ok(took < 2_000, `${path}: chunking took ${took.toFixed(0)} ms`);
    const chunk = chunked.chunks.find((chunk) => /harbor_?toll/i.test(chunk.symbol));
    ok(chunk !== undefined, JSON.stringify(chunked.chunks.map((c) => c.symbol)));
    // Its text is kept (the cleaning takes at most the comment's first star).
    ok(/^\*{79999,80000} x$/.test(chunk.doc), `${path}: doc of ${chunk.doc.length} characters`);
  }
});

Deno.test("a Java import with a long run of spaces is read in linear time", async () => {
  const text = `import a${" ".repeat(60_000)}.b ;\nclass HarborToll {}\n`;
  const started = performance.now();
  const chunked = await chunkFile("A.java", text, undefined, 60_000);
  const took = performance.now() - started;
  ok(took < 2_000, `chunking took ${took.toFixed(0)} ms`);
  const imported = chunked.relations.find((relation) => relation.kind === "IMPORTS");
  ok(imported?.name.endsWith(".b"), `imported: ${imported?.name.slice(-20)}`);
});
