/**
 * Adversarial: `.tern` or `.git` at the workspace's top is a link (a repository can ship a
 * `.tern` link; a person may keep `.git` elsewhere). Bubblewrap mounts follow links, so the
 * read-only mount lands on the link's target, and the link's own name stays a plain entry of
 * the writable workspace: a command could remove it and make a `.tern` or `.git` folder of its
 * own (a `.git/config` with `core.fsmonitor` runs code at the person's next `git status`).
 * Commands must not run in such a view, and must say how to fix it.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

/** Replaces the link at `name` by a folder holding a file, as a hostile command would. */
const REPLACE = (name: string) =>
  `rm -f ${name} && mkdir ${name} && echo '[core] fsmonitor = touch PWNED' > ${name}/config`;

for (const name of [".tern", ".git"]) {
  bwrapTest(
    `createSandbox() shell: a command cannot replace a linked ${name} at the workspace's top`,
    async () => {
      await withViewBox(async (box) => {
        const target = join(box.ws, "kept");
        await Deno.mkdir(target);
        await Deno.writeTextFile(join(target, "config"), "[core]\n");
        await Deno.symlink("kept", join(box.ws, name));
        box.runtime.shellTreeChanged();
        const result = await box.runtime.shell(`${REPLACE(name)}; echo "<ran>"`, {
          cwd: box.ws,
          timeoutMs: 30_000,
        }).then((r) => r.output, (error: Error) => `refused: ${error.message}`);
        ok(!result.includes("<ran>"), result);
        match(result, new RegExp(`"${name.replace(".", "\\.")}".*is a link`), result);
        // The link is still there, leading where it did.
        equal(await Deno.readLink(join(box.ws, name)), "kept");
        equal(await Deno.readTextFile(join(target, "config")), "[core]\n");
      });
    },
  );
}

bwrapTest(
  "createSandbox() shell: the link's own folder stays read-only, and commands run again once the link is gone",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "kept"));
      await Deno.symlink("kept", join(box.ws, ".tern"));
      box.runtime.shellTreeChanged();
      await box.runtime.shell("true", { cwd: box.ws }).catch(() => {});
      // The person follows the advice: the folder in place of the link.
      await Deno.remove(join(box.ws, ".tern"));
      await Deno.rename(join(box.ws, "kept"), join(box.ws, ".tern"));
      box.runtime.shellTreeChanged();
      const result = await box.run("echo x > .tern/evil; echo rc=$?");
      match(result.output, /rc=1/);
    });
  },
);
