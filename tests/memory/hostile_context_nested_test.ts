import { deepEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_CONTEXT_FILE_CHARS,
  MAX_CONTEXT_TOTAL_CHARS,
  nestedContextFiles,
} from "../../src/memory/context_files.ts";
import { READ_ALL } from "../support/read_all.ts";

Deno.test("nestedContextFiles() puts at most MAX_CONTEXT_TOTAL_CHARS of a deep chain of folders into one call, and the rest into later ones", async () => {
  const workspace = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-" }));
  try {
    // A repository's chain of 40 nested folders, each with a full AGENTS.md: 1.28 M characters.
    const folders: string[] = [];
    let dir = workspace;
    for (let i = 0; i < 40; i++) {
      dir = join(dir, `d${i}`);
      folders.push(dir);
      await Deno.mkdir(dir);
      await Deno.writeTextFile(
        join(dir, "AGENTS.md"),
        String(i % 10).repeat(MAX_CONTEXT_FILE_CHARS),
      );
    }
    const touched = join(dir, "f.txt");
    await Deno.writeTextFile(touched, "x");
    const visited = new Set<string>();
    const seen: string[] = [];
    for (let call = 0; call < 40 && seen.length < folders.length; call++) {
      const files = nestedContextFiles(workspace, touched, visited, READ_ALL);
      const size = files.reduce((sum, file) => sum + file.text.length, 0);
      ok(files.length > 0, `call ${call} brought nothing`);
      ok(size <= MAX_CONTEXT_TOTAL_CHARS, `call ${call} brought ${size} characters`);
      seen.push(...files.map((file) => join(file.path, "..")));
    }
    // Every folder's file joins once, top down, over the calls.
    deepEqual(seen, folders);
    deepEqual(nestedContextFiles(workspace, touched, visited, READ_ALL), []);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("nestedContextFiles() gives a folder's files once however many links name it", async () => {
  const workspace = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-nested-" }));
  try {
    // `sub/loop -> .`: `sub/loop/loop/…/f.txt` names `sub` at every depth.
    await Deno.mkdir(join(workspace, "sub"));
    await Deno.writeTextFile(join(workspace, "sub", "AGENTS.md"), "SUB rules");
    await Deno.writeTextFile(join(workspace, "sub", "f.txt"), "x");
    await Deno.symlink(".", join(workspace, "sub", "loop"));
    const visited = new Set<string>();
    const touched = ["sub", ...Array(30).fill("loop"), "f.txt"].join("/");
    const files = nestedContextFiles(workspace, touched, visited, READ_ALL);
    deepEqual(files.map((file) => file.text), ["SUB rules"]);
    deepEqual(nestedContextFiles(workspace, "sub/loop/loop/f.txt", visited, READ_ALL), []);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
