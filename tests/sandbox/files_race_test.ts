/**
 * A symlink (or FIFO, or hard link) swapped in between a file tool's path check and its open.
 * The tools call checkPath() and then openVerified()/writeFileVerified(); these tests make the
 * swap happen deterministically between the two calls, then race a real swapping process
 * against the tools. withFilesBox() asserts that nothing outside the workspace changed.
 */
import { equal, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import { ToolError } from "../../src/core/observation.ts";
import { checkPath } from "../../src/tools/paths.ts";
import { makeDirsVerified, openVerified, writeFileVerified } from "../../src/tools/verified_io.ts";
import { mkfifo, plant, SECRET, withFilesBox } from "./_files_box.ts";

function changed(doing: string) {
  return (error: unknown) => {
    ok(error instanceof ToolError, String(error));
    equal(error.code, "POLICY_DENIED");
    ok(error.message.includes(`changed while it was being ${doing}`), error.message);
    return true;
  };
}

/** Replaces folder `ws/name` by a symlink to `target`, keeping the folder as `name.old`. */
async function swapFolder(ws: string, name: string, target: string): Promise<void> {
  await Deno.rename(join(ws, name), join(ws, `${name}.old`));
  await Deno.symlink(target, join(ws, name));
}

Deno.test("openVerified() refuses a file swapped for a symlink to outside after the check", async () => {
  await withFilesBox(async ({ ws, outside }) => {
    await plant(ws, { "a.txt": "inside\n" });
    const checked = await checkPath(ws, "a.txt");
    await Deno.remove(join(ws, "a.txt"));
    await Deno.symlink(join(outside, "secret.txt"), join(ws, "a.txt"));
    throws(() => openVerified(checked), changed("opened"));
  });
});

Deno.test("openVerified() refuses a parent folder swapped for a symlink to outside", async () => {
  await withFilesBox(async ({ ws, outside }) => {
    await plant(ws, { "sub/nested.txt": "inside\n" });
    const checked = await checkPath(ws, "sub/nested.txt");
    await swapFolder(ws, "sub", join(outside, "dir"));
    throws(() => openVerified(checked), changed("opened"));
  });
});

Deno.test("openVerified() refuses a FIFO or another file swapped in, without hanging", async () => {
  await withFilesBox(async ({ ws }) => {
    await plant(ws, { "a.txt": "inside\n", "b.txt": "other\n" });
    const checked = await checkPath(ws, "a.txt");
    await Deno.remove(join(ws, "a.txt"));
    await mkfifo(join(ws, "a.txt"));
    throws(() => openVerified(checked), changed("opened"));
    await Deno.remove(join(ws, "a.txt"));
    await Deno.rename(join(ws, "b.txt"), join(ws, "a.txt"));
    throws(() => openVerified(checked), changed("opened"));
  });
});

Deno.test("writeFileVerified() refuses a parent folder swapped for a symlink to outside", async () => {
  await withFilesBox(async ({ ws, outside }) => {
    await plant(ws, { "sub/nested.txt": "inside\n" });
    const existing = await checkPath(ws, "sub/nested.txt", { forWrite: true });
    const fresh = await checkPath(ws, "sub/new.txt", { forWrite: true });
    await swapFolder(ws, "sub", join(outside, "dir"));
    throws(() => writeFileVerified(existing, "pwned"), changed("written"));
    throws(() => writeFileVerified(fresh, "pwned"), changed("written"));
    equal(await Deno.readTextFile(join(ws, "sub.old/nested.txt")), "inside\n");
  });
});

Deno.test("writeFileVerified() replaces a symlink or hard link swapped in at the target", async () => {
  await withFilesBox(async ({ ws, outside }) => {
    await plant(ws, { "a.txt": "inside\n", "b.txt": "inside\n" });
    const a = await checkPath(ws, "a.txt", { forWrite: true });
    const b = await checkPath(ws, "b.txt", { forWrite: true });
    await Deno.remove(join(ws, "a.txt"));
    await Deno.symlink(join(outside, "secret.txt"), join(ws, "a.txt"));
    await Deno.remove(join(ws, "b.txt"));
    await Deno.link(join(outside, "dir/nested.txt"), join(ws, "b.txt"));
    writeFileVerified(a, "new a\n");
    writeFileVerified(b, "new b\n");
    for (const [name, text] of [["a.txt", "new a\n"], ["b.txt", "new b\n"]]) {
      const info = await Deno.lstat(join(ws, name));
      ok(info.isFile && info.nlink === 1, `${name} is a fresh file`);
      equal(await Deno.readTextFile(join(ws, name)), text);
    }
  });
});

Deno.test("makeDirsVerified() creates nothing through a parent swapped for a symlink", async () => {
  await withFilesBox(async ({ ws, outside }) => {
    await Deno.mkdir(join(ws, "sub"));
    const checked = await checkPath(ws, "sub/x/y/new.txt", { forWrite: true });
    await swapFolder(ws, "sub", join(outside, "dir"));
    throws(() => makeDirsVerified(ws, join(ws, "sub/x/y"), checked.path), changed("written"));
  });
});

/**
 * A separate process that swaps `ws/sub` between a real folder and a symlink to `target`
 * until its stdin closes, holding each state about a millisecond. It is the attacker: it
 * repairs a folder the tools created in the gap between its two renames.
 */
const SWAPPER = `
const [ws, target] = Deno.args;
const sub = ws + "/sub", keep = ws + "/sub.real", link = ws + "/sub.link";
Deno.symlinkSync(target, link);
const place = (from, to) => {
  try { Deno.renameSync(from, to); }
  catch { Deno.removeSync(to, { recursive: true }); Deno.renameSync(from, to); }
};
let done = false;
(async () => { for await (const _ of Deno.stdin.readable); done = true; })();
let swaps = 0;
console.log("ready");
while (!done) {
  if (swaps % 2 === 0) { Deno.renameSync(sub, keep); place(link, sub); }
  else { Deno.renameSync(sub, link); place(keep, sub); }
  swaps++;
  await new Promise((ok) => setTimeout(ok, 1));
}
if (swaps % 2 === 1) { Deno.renameSync(sub, link); place(keep, sub); }
console.log("swaps", swaps);
`;

Deno.test("read and write never reach outside while a process swaps a parent folder", async () => {
  await withFilesBox(async ({ run, ws, outside }) => {
    await plant(ws, { "sub/nested.txt": "inside\n" });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", SWAPPER, ws, join(outside, "dir")],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      equal((await lines.read()).value?.trim(), "ready");
      const allowed = new Set(["POLICY_DENIED", "NOT_FOUND", "EXECUTION_FAILED"]);
      for (let i = 0; i < 150; i++) {
        const read = await run("read", { path: "sub/nested.txt" });
        if (read.status === "SUCCEEDED") ok(read.output.includes("inside"), read.output);
        else ok(allowed.has(read.code), JSON.stringify(read));
        ok(!JSON.stringify(read).includes(SECRET.trim()), "read saw the outside file");
        const path = i % 2 === 0 ? "sub/nested.txt" : `sub/new-${i}.txt`;
        const write = await run("write", { path, content: `inside ${i}\n` });
        if (write.status === "ERROR") ok(allowed.has(write.code), JSON.stringify(write));
      }
    } finally {
      await child.stdin.close().catch(() => {});
      const last = (await lines.read()).value;
      lines.releaseLock();
      await child.stdout.cancel().catch(() => {});
      const status = await child.status;
      ok(last?.startsWith("swaps") && status.code === 0, "the swapper ended cleanly");
    }
    await rejects(Deno.lstat(join(outside, "dir/new-1.txt")));
  }, { folderTimes: false });
});
