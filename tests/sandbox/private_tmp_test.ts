import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { makePrivateTmp, removeStaleTmp } from "../../src/sandbox/private_tmp.ts";

const OLD = new Date(Date.now() - 3_600_000);

Deno.test("removeStaleTmp() removes dead runs' tmp folders only, following no link", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_stale_" }));
  const dir = join(root, "tmp");
  const outside = join(root, "outside");
  await Deno.mkdir(dir);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "keep.txt"), "keep");
  const live = await Deno.open(await folder(dir, "tern-tmp-live"), { read: true });
  try {
    await live.lock(true);
    const dead = await folder(dir, "tern-tmp-dead");
    await Deno.symlink(outside, join(dead, "link"));
    await Deno.writeTextFile(join(dead, "file"), "x");
    await Deno.utime(dead, OLD, OLD);
    await Deno.symlink(outside, join(dir, "tern-tmp-link"));
    await folder(dir, "tern-tmp-fresh", false);
    await folder(dir, "other-old");
    const own = await folder(dir, "tern-tmp-own");

    deepEqual(await removeStaleTmp(own, dir), [dead]);
    deepEqual((await names(dir)).sort(), [
      "other-old",
      "tern-tmp-fresh",
      "tern-tmp-link",
      "tern-tmp-live",
      "tern-tmp-own",
    ]);
    equal(await Deno.readTextFile(join(outside, "keep.txt")), "keep");
  } finally {
    live.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("makePrivateTmp() holds its folder against removeStaleTmp() until removed", async () => {
  const tmp = await makePrivateTmp();
  const other = await makePrivateTmp();
  try {
    await Deno.utime(tmp.path, OLD, OLD);
    // The host's /tmp is shared: a run that died elsewhere may leave a folder this sweep takes.
    const removed = await removeStaleTmp(other.path);
    equal(removed.includes(tmp.path), false, removed.join(", "));
    await Deno.stat(tmp.path);
  } finally {
    await tmp.remove();
    await other.remove();
  }
});

async function folder(dir: string, name: string, old = true): Promise<string> {
  const path = join(dir, name);
  await Deno.mkdir(path);
  if (old) await Deno.utime(path, OLD, OLD);
  return path;
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name);
}
