/**
 * Adversarial: a `.git` file points (`gitdir:`) at a folder that does not exist inside the
 * workspace. git follows the pointer, so a command that made that folder, with a config whose
 * `core.fsmonitor` names a program, would run code at the person's next `git status` in the
 * file's folder. The folder's first missing part is guarded while the pointer names it.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

bwrapTest(
  "createSandbox() shell: a command cannot make the missing folder a .git file points at",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "sub"));
      await Deno.mkdir(join(box.ws, "store"));
      await Deno.writeTextFile(join(box.ws, "sub", ".git"), "gitdir: ../store/sub-git\n");
      // Two parts missing: the first of them is what is guarded.
      await Deno.mkdir(join(box.ws, "wt"));
      await Deno.writeTextFile(join(box.ws, "wt", ".git"), "gitdir: ../deep/a/wt-git\n");
      box.runtime.shellTreeChanged();
      const made = await box.run(
        "mkdir -p store/sub-git && echo '[core] fsmonitor = touch PWNED' > store/sub-git/config;" +
          " echo sub=$?; mkdir -p deep/a/wt-git && touch deep/a/wt-git/HEAD; echo wt=$?",
      );
      match(made.output, /sub=1/);
      match(made.output, /wt=1/);
      ok(!await exists(join(box.ws, "store", "sub-git", "config")), "the gitdir was made");
      ok(!await exists(join(box.ws, "deep", "a")), "a folder below the guard was made");
      // What the workspace's other folders hold is still the commands' to change.
      const other = await box.run("mkdir store/other && echo rc=$?");
      match(other.output, /rc=0/);
      equal(await exists(join(box.ws, "store", "other")), true);
    });
  },
);

bwrapTest(
  "createSandbox() shell: a .git file pointing outside the workspace or at a folder that exists guards nothing more",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "sub"));
      await Deno.writeTextFile(join(box.ws, "sub", ".git"), "gitdir: /nonexistent/far/away\n");
      box.runtime.shellTreeChanged();
      const result = await box.run("mkdir -p far/away && echo rc=$?");
      match(result.output, /rc=0/);
    });
  },
);
