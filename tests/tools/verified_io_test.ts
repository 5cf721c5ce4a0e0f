import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { ToolError } from "../../src/core/observation.ts";
import { checkPath } from "../../src/tools/paths.ts";
import {
  makeDirsVerified,
  openVerified,
  readFileVerified,
  writeFileVerified,
  YIELD_EVERY_CHUNKS,
} from "../../src/tools/verified_io.ts";
import { withSandbox, writeFiles } from "./_helpers.ts";

async function names(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) found.push(entry.name);
  return found.sort();
}

Deno.test("openVerified() reads the head, chunks and whole content of the checked file", async () => {
  await withSandbox(async ({ ws }) => {
    const text = "0123456789".repeat(10_000);
    await writeFiles(ws, { "a.txt": text });
    using file = openVerified(await checkPath(ws, "a.txt"));
    equal(file.size, text.length);
    equal(new TextDecoder().decode(file.head(4)), "0123");
    equal(new TextDecoder().decode(file.readAll()), text);
    const sizes: number[] = [];
    for await (const chunk of file.chunks(40_000)) sizes.push(chunk.length);
    deepEqual(sizes, [40_000, 40_000, 20_000]);
    equal(file.head(4).length, 4, "reads are positional: the head is still there");
  });
});

Deno.test("openVerified() streams a file larger than one yield interval", async () => {
  await withSandbox(async ({ ws }) => {
    const chunk = 1024;
    await Deno.writeFile(join(ws, "big.bin"), new Uint8Array(chunk * (YIELD_EVERY_CHUNKS + 3)));
    using file = openVerified(await checkPath(ws, "big.bin"));
    let total = 0;
    for await (const part of file.chunks(chunk)) total += part.length;
    equal(total, chunk * (YIELD_EVERY_CHUNKS + 3));
  });
});

Deno.test("openVerified() refuses what is not a checked regular file", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.mkdir(join(ws, "dir"));
    throws(() => openVerified({ path: "dir", real: join(ws, "dir"), info: null }), TypeError);
    const checked = await checkPath(ws, "dir");
    throws(() => openVerified(checked), TypeError);
  });
});

Deno.test("openVerified() reports a file removed after the check as NOT_FOUND", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "a" });
    const checked = await checkPath(ws, "a.txt");
    await Deno.remove(join(ws, "a.txt"));
    throws(() => openVerified(checked), (error: unknown) => {
      ok(error instanceof ToolError);
      equal(error.code, "NOT_FOUND");
      equal(error.message, 'Path "a.txt" not found: it was removed after the check');
      return true;
    });
  });
});

Deno.test("readFileVerified() reads workspace files and returns null for everything else", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await writeFiles(ws, { "a.txt": "a" });
    await Deno.symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
    await Deno.symlink(outside, join(ws, "dir"));
    equal(new TextDecoder().decode(readFileVerified(ws, join(ws, "a.txt")) ?? undefined), "a");
    equal(readFileVerified(ws, join(ws, "link.txt")), null);
    equal(readFileVerified(ws, join(ws, "dir/secret.txt")), null);
    equal(readFileVerified(ws, join(outside, "secret.txt")), null);
    equal(readFileVerified(ws, join(ws, "missing.txt")), null);
  });
});

Deno.test("writeFileVerified() creates, replaces with a mode and leaves no temp file", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.mkdir(join(ws, "sub"));
    writeFileVerified(await checkPath(ws, "sub/a.txt", { forWrite: true }), "one");
    writeFileVerified(await checkPath(ws, "sub/a.txt", { forWrite: true }), "two", {
      mode: 0o640,
    });
    equal(await Deno.readTextFile(join(ws, "sub/a.txt")), "two");
    equal((await Deno.stat(join(ws, "sub/a.txt"))).mode! & 0o777, 0o640);
    deepEqual(await names(join(ws, "sub")), ["a.txt"]);
  });
});

Deno.test("writeFileVerified() removes temp files killed writers left in its folder, nothing else", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const dir = join(ws, "sub");
    await Deno.mkdir(dir);
    const old = new Date(Date.now() - 5 * 60_000);
    const aged = async (name: string, text = "x") => {
      await Deno.writeTextFile(join(dir, name), text);
      await Deno.utime(join(dir, name), old, old);
    };
    // Left by a writer killed mid-write (SIGKILL) a while ago: removed.
    await aged(".big.txt.tern-1bcf4c5d.tmp");
    await aged(".a.txt.tern-0123abcd.tmp");
    // A writer's file of a moment ago (it may still be writing): kept.
    await Deno.writeTextFile(join(dir, ".c.txt.tern-89abcdef.tmp"), "fresh");
    // Other names, however old: kept.
    for (
      const name of [
        ".a.txt.tern-0123ABCD.tmp",
        ".a.txt.tern-0123abc.tmp",
        "a.txt.tern-0123abcd.tmp",
        ".a.txt.tern-0123abcd.tmp.bak",
        ".a.txt.tern-0123abcd.temp",
        "notes.txt",
      ]
    ) await aged(name);
    // A link or a folder with such a name: kept (and what the link leads to).
    await Deno.writeTextFile(join(outside, "target.txt"), "keep");
    const link = join(dir, ".l.txt.tern-11111111.tmp");
    await Deno.symlink(join(outside, "target.txt"), link);
    const touched = await new Deno.Command("touch", { args: ["-h", "-d", "5 minutes ago", link] })
      .output();
    ok(touched.success, "the link is old");
    await Deno.mkdir(join(dir, ".d.tern-22222222.tmp"));
    await Deno.utime(join(dir, ".d.tern-22222222.tmp"), old, old);
    writeFileVerified(await checkPath(ws, "sub/new.txt", { forWrite: true }), "new");
    deepEqual(await names(dir), [
      ".a.txt.tern-0123ABCD.tmp",
      ".a.txt.tern-0123abc.tmp",
      ".a.txt.tern-0123abcd.temp",
      ".a.txt.tern-0123abcd.tmp.bak",
      ".c.txt.tern-89abcdef.tmp",
      ".d.tern-22222222.tmp",
      ".l.txt.tern-11111111.tmp",
      "a.txt.tern-0123abcd.tmp",
      "new.txt",
      "notes.txt",
    ]);
    equal(await Deno.readTextFile(join(outside, "target.txt")), "keep");
  });
});

Deno.test("writeFileVerified() leaves the temp files of other folders alone", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.mkdir(join(ws, "other"));
    const left = join(ws, "other", ".a.txt.tern-1bcf4c5d.tmp");
    await Deno.writeTextFile(left, "x");
    const old = new Date(Date.now() - 5 * 60_000);
    await Deno.utime(left, old, old);
    writeFileVerified(await checkPath(ws, "b.txt", { forWrite: true }), "b");
    deepEqual(await names(join(ws, "other")), [".a.txt.tern-1bcf4c5d.tmp"]);
  });
});

Deno.test("writeFileVerified() refuses when its folder was removed after the check", async () => {
  await withSandbox(async ({ ws }) => {
    await Deno.mkdir(join(ws, "sub"));
    const checked = await checkPath(ws, "sub/a.txt", { forWrite: true });
    await Deno.remove(join(ws, "sub"));
    throws(() => writeFileVerified(checked, "x"), (error: unknown) => {
      ok(error instanceof ToolError);
      equal(error.code, "POLICY_DENIED");
      ok(error.message.includes("changed while it was being written"));
      return true;
    });
    deepEqual(await names(ws), []);
  });
});

Deno.test("makeDirsVerified() creates missing folders and refuses a file in the way", async () => {
  await withSandbox(async ({ ws }) => {
    makeDirsVerified(ws, join(ws, "a/b/c"), "a/b/c/x.txt");
    ok((await Deno.lstat(join(ws, "a/b/c"))).isDirectory);
    makeDirsVerified(ws, join(ws, "a/b/c"), "a/b/c/x.txt");
    await writeFiles(ws, { "f.txt": "" });
    throws(() => makeDirsVerified(ws, join(ws, "f.txt/d"), "f.txt/d/x"), Deno.errors.NotADirectory);
    throws(() => makeDirsVerified(ws, join(ws, "f.txt"), "f.txt/x"), Deno.errors.NotADirectory);
  });
});
