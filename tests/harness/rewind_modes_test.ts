/** The permissions of files and folders a rewind restores: private unless known otherwise. */
import { equal, throws } from "node:assert/strict";
import { join } from "node:path";
import { removeEmptyFolders, writeFileSafely } from "../../src/harness/rewind/safe_files.ts";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { Session } from "../../src/session/session.ts";
import { checkpointedTurn, strictCheckpoints, temp } from "../support/host_tool.ts";

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

Deno.test("writeFileSafely() gives a file it makes anew no more than the umask allows", async () => {
  // A turn removed a private key (0600, under the person's umask 077): the checkpoint holds only
  // 644 or 755, and the file it brings back must not be readable by everyone.
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-modes-" }));
  const old = Deno.umask(0o077);
  try {
    await writeFileSafely(ws, "id_ed25519", bytes, false);
    await writeFileSafely(ws, "keys/deploy.sh", bytes, true);
    equal(modeOf(join(ws, "id_ed25519")).toString(8), "600");
    equal(modeOf(join(ws, "keys/deploy.sh")).toString(8), "700");
    equal(modeOf(join(ws, "keys")).toString(8), "700");
  } finally {
    Deno.umask(old);
    await Deno.remove(ws, { recursive: true });
  }
  // Under the usual umask, as before.
  const open = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-modes-" }));
  const usual = Deno.umask(0o022);
  try {
    await writeFileSafely(open, "a.txt", bytes, false);
    await writeFileSafely(open, "run.sh", bytes, true);
    equal(modeOf(join(open, "a.txt")).toString(8), "644");
    equal(modeOf(join(open, "run.sh")).toString(8), "755");
  } finally {
    Deno.umask(usual);
    await Deno.remove(open, { recursive: true });
  }
});

Deno.test("applyRewind() brings back a private file a turn removed no more readable than the umask allows", async () => {
  const ws = await temp("tern-modes-rewind-");
  const home = await temp("tern-modes-home-");
  Deno.writeTextFileSync(join(ws, "id_ed25519"), "PRIVATE KEY\n", { mode: 0o600 });
  Deno.chmodSync(join(ws, "id_ed25519"), 0o600);
  const old = Deno.umask(0o077);
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  try {
    const id = await checkpointedTurn(session, strictCheckpoints(session, ws), () => {
      Deno.removeSync(join(ws, "id_ed25519"));
    });
    const options = { workspace: ws, scope: "files" as const, rules: [] };
    const plan = await planRewind(session, id, options);
    await applyRewind(session, plan, options);
    equal(Deno.readTextFileSync(join(ws, "id_ed25519")), "PRIVATE KEY\n");
    equal(modeOf(join(ws, "id_ed25519")).toString(8), "600");
  } finally {
    Deno.umask(old);
    session.close();
  }
});

Deno.test("applyRewind() keeps a folder whose files it swaps: its permissions stay", async () => {
  // The turn renamed the only file of a private folder: the rewind removes the new name and
  // writes the old one. The folder is the person's, with its own mode; it is not made anew.
  const ws = await temp("tern-modes-folder-");
  const home = await temp("tern-modes-home-");
  Deno.mkdirSync(join(ws, "private"));
  Deno.chmodSync(join(ws, "private"), 0o700);
  Deno.writeTextFileSync(join(ws, "private", "a.txt"), "mine\n");
  const inode = Deno.statSync(join(ws, "private")).ino;
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  try {
    const id = await checkpointedTurn(session, strictCheckpoints(session, ws), () => {
      Deno.renameSync(join(ws, "private", "a.txt"), join(ws, "private", "b.txt"));
      // And a folder the turn made, with a file in it: the rewind removes both.
      Deno.mkdirSync(join(ws, "made", "deep"), { recursive: true });
      Deno.writeTextFileSync(join(ws, "made", "deep", "new.txt"), "new\n");
    });
    const options = { workspace: ws, scope: "files" as const, rules: [] };
    const plan = await planRewind(session, id, options);
    await applyRewind(session, plan, options);
    equal(Deno.readTextFileSync(join(ws, "private", "a.txt")), "mine\n");
    equal([...Deno.readDirSync(join(ws, "private"))].length, 1);
    equal(modeOf(join(ws, "private")).toString(8), "700");
    equal(Deno.statSync(join(ws, "private")).ino, inode);
    throws(() => Deno.lstatSync(join(ws, "made")), Deno.errors.NotFound);
  } finally {
    session.close();
  }
});

Deno.test("removeEmptyFolders() removes empty folders up to the workspace, never through a link", async () => {
  const ws = await temp("tern-modes-prune-");
  const outside = await temp("tern-modes-outside-");
  Deno.mkdirSync(join(outside, "b"));
  // A restore wrote the link `a` where the turn had made the folder `a/b`.
  Deno.symlinkSync(outside, join(ws, "a"));
  Deno.mkdirSync(join(ws, "c", "d"), { recursive: true });
  Deno.mkdirSync(join(ws, "kept"));
  Deno.writeTextFileSync(join(ws, "kept", "f"), "f\n");
  await removeEmptyFolders(ws, ["a/b/x", "c/d/x", "kept/gone", "../escape/x"]);
  equal(Deno.statSync(join(outside, "b")).isDirectory, true);
  equal(Deno.lstatSync(join(ws, "a")).isSymlink, true);
  throws(() => Deno.lstatSync(join(ws, "c")), Deno.errors.NotFound);
  equal(Deno.readTextFileSync(join(ws, "kept", "f")), "f\n");
});
