/** The permissions of files and folders a rewind restores: private unless known otherwise. */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { writeFileSafely } from "../../src/harness/rewind/safe_files.ts";

const bytes = new TextEncoder().encode("restored\n");
const modeOf = (path: string) => Deno.lstatSync(path).mode! & 0o777;

Deno.test("writeFileSafely() keeps the permissions of the file it replaces", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-modes-" }));
  try {
    Deno.writeTextFileSync(join(ws, "shared.txt"), "old\n");
    Deno.chmodSync(join(ws, "shared.txt"), 0o644);
    Deno.writeTextFileSync(join(ws, "group.txt"), "old\n");
    Deno.chmodSync(join(ws, "group.txt"), 0o640);
    await writeFileSafely(ws, "shared.txt", bytes, false);
    await writeFileSafely(ws, "group.txt", bytes, true);
    equal(modeOf(join(ws, "shared.txt")).toString(8), "644");
    equal(modeOf(join(ws, "group.txt")).toString(8), "750");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
