/**
 * A second process for store_test.ts: reads the index at Deno.args[0] in a loop while the test
 * writes, until it sees the generation "final". Writes Deno.args[1] after its first 20 reads, and
 * prints one JSON line: how many reads, the errors, and the reads that saw a mixed file.
 */
import { IndexStore } from "../../src/index/store.ts";

const [file, progress] = Deno.args;
const { store } = IndexStore.open(file);
const errors: string[] = [];
const mixed: string[] = [];
let reads = 0;
for (let done = false; !done;) {
  try {
    const hits = store.search("generation marker", { limit: 50 })
      .filter((hit) => hit.chunk.path === "src/gen.ts");
    const generations = new Set(hits.map((hit) => hit.chunk.doc));
    if (hits.length !== 5 || generations.size !== 1) {
      mixed.push(`${hits.length} chunks of ${[...generations].join(",")}`);
    }
    done = generations.has("final");
  } catch (error) {
    errors.push(String(error));
    if (errors.length > 20) break;
  }
  reads++;
  if (reads === 20) Deno.writeTextFileSync(progress, "20");
}
store.close();
console.log(JSON.stringify({ reads, errors, mixed }));
