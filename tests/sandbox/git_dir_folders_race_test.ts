/**
 * The missing folder a `.git` file points at is made by tern (see src/sandbox/git_dir_folders.ts)
 * while a process of the session may swap a folder tern just made with a symlink to a folder
 * outside, with `renameat2(RENAME_EXCHANGE)` as fast as it can: no folder is ever made outside.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { makeGitDirFolders } from "../../src/sandbox/git_dir_folders.ts";
import { temp } from "../support/host_tool.ts";
import { flipperNeed, whileFlipping } from "../support/link_flipper.ts";
import { testWith } from "../support/needs.ts";

/** Removes what is at `path`: a link itself (never what it leads to), a folder with its content. */
function removeEntry(path: string): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return;
  }
  if (info.isDirectory) Deno.removeSync(path, { recursive: true });
  else Deno.removeSync(path);
}

/** How long the race runs at most (it stops at the first leak). */
const RACE_MS = 8_000;
const ATTEMPTS = 150;

testWith(
  [flipperNeed],
  "makeGitDirFolders() makes nothing outside while a folder it made is swapped with a link",
  async () => {
    const ws = await temp("tern-gitdir-ws-");
    const outside = await temp("tern-gitdir-out-");
    try {
      Deno.symlinkSync(outside, join(ws, "lnk"));
      const deadline = Date.now() + RACE_MS;
      for (let i = 0; i < ATTEMPTS && Date.now() < deadline; i++) {
        await whileFlipping(ws, "deep", "lnk", async () => {
          await makeGitDirFolders(join(ws, "deep"), join(ws, "deep", "a", "wt-git"));
        });
        equal([...Deno.readDirSync(outside)].length, 0, `a folder was made outside (try ${i})`);
        // Back to the start, whichever name the last swap left where: a link is unlinked, never
        // followed; the folder tern made is removed with what it holds.
        for (const name of ["deep", "lnk"]) removeEntry(join(ws, name));
        Deno.symlinkSync(outside, join(ws, "lnk"));
      }
    } finally {
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
);

testWith(
  [],
  "makeGitDirFolders() makes every missing part, and refuses a part that is a link",
  async () => {
    const ws = await temp("tern-gitdir-ws-");
    const outside = await temp("tern-gitdir-out-");
    try {
      equal(await makeGitDirFolders(join(ws, "a"), join(ws, "a", "b", "c")), true);
      equal(Deno.statSync(join(ws, "a", "b", "c")).isDirectory, true);
      equal(await makeGitDirFolders(join(ws, "one"), join(ws, "one")), true);
      equal(Deno.statSync(join(ws, "one")).isDirectory, true);
      // A part that exists already (here a link to outside) is not entered.
      Deno.symlinkSync(outside, join(ws, "x"));
      equal(await makeGitDirFolders(join(ws, "x"), join(ws, "x", "y")), false);
      equal([...Deno.readDirSync(outside)].length, 0);
      // Odd names are names, not options or patterns.
      equal(await makeGitDirFolders(join(ws, "-n"), join(ws, "-n", "*", "$HOME")), true);
      equal(Deno.statSync(join(ws, "-n", "*", "$HOME")).isDirectory, true);
    } finally {
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
);
