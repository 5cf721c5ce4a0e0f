import { deepEqual, equal } from "node:assert/strict";
import { chunkFile } from "../../src/index/chunker.ts";
import { IndexStore } from "../../src/index/store.ts";
import { tempIndex } from "./_fixtures.ts";

const MAIN = `import { parse as readArgs, other } from "./util.js";
import * as fmt from "../lib/format";
import Default from "./util.js";
import { external } from "node:fs";

export function main() {
  readArgs();
  fmt.pretty();
  fmt.deep.nested();
  Default();
  external();
  local();
}
function local() {}
`;

const UTIL = `export function parse() {}
export const other = () => 1;
`;

Deno.test("chunkFile() gives calls to names imported from relative modules their target", async () => {
  const file = await chunkFile("src/app/main.ts", MAIN);
  const calls = file.relations.filter((relation) => relation.kind === "CALLS")
    .map((relation) => ({ name: relation.name, to: relation.to, target: relation.target }));
  deepEqual(calls, [
    { name: "readArgs", to: undefined, target: { base: "src/app/util", symbol: "parse" } },
    { name: "fmt.pretty", to: undefined, target: { base: "src/lib/format", symbol: "pretty" } },
    { name: "fmt.deep.nested", to: undefined, target: undefined },
    { name: "Default", to: undefined, target: undefined },
    { name: "external", to: undefined, target: undefined },
    { name: "local", to: "src/app/main.ts#FUNCTION:local:14", target: undefined },
  ]);
});

Deno.test("IndexStore resolves a call to an imported function in either order, and follows changes", async () => {
  const { dir, file } = tempIndex();
  const { store } = IndexStore.open(file);
  try {
    const callers = (id: string) =>
      store.relations({ kind: "CALLS", to: id }).map((relation) => relation.name);
    // The importing file first: the call waits for the imported one.
    store.replaceFile(await chunkFile("src/app/main.ts", MAIN));
    equal(store.relations({ kind: "CALLS", name: "readArgs" })[0].to, undefined);
    store.replaceFile(await chunkFile("src/app/util.ts", UTIL));
    store.replaceFile(
      await chunkFile("src/lib/format/index.ts", "export function pretty() {}\n"),
    );
    deepEqual(callers("src/app/util.ts#FUNCTION:parse:1"), ["readArgs"]);
    deepEqual(callers("src/lib/format/index.ts#FUNCTION:pretty:1"), ["fmt.pretty"]);
    // `other` is imported but never called; the arrow function is not a call target.
    deepEqual(callers("src/app/util.ts#FUNCTION:other:2"), []);

    // The function moves down a line: its id changes and the call follows it.
    store.replaceFile(await chunkFile("src/app/util.ts", `\n${UTIL}`));
    deepEqual(callers("src/app/util.ts#FUNCTION:parse:1"), []);
    deepEqual(callers("src/app/util.ts#FUNCTION:parse:2"), ["readArgs"]);

    // Re-indexing the caller keeps the link.
    store.replaceFile(await chunkFile("src/app/main.ts", `${MAIN}\n`));
    deepEqual(callers("src/app/util.ts#FUNCTION:parse:2"), ["readArgs"]);

    // The imported file goes away: the call points at nothing rather than at a stale id.
    store.removeFile("src/app/util.ts");
    equal(store.relations({ kind: "CALLS", name: "readArgs" })[0].to, undefined);
  } finally {
    store.close();
    Deno.removeSync(dir, { recursive: true });
  }
});
