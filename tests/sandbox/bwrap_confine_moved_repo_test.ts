/**
 * Adversarial: a repository found by the `.git` search moves before the next sandbox starts.
 * The view is kept between commands (it is made again only after a command that may change
 * files, and at each turn's end), and a background process runs on between calls: it can
 * rename the folder that holds a nested repository (`sub` to `sub2`; only `sub/.git` itself
 * is a mount point). The next command must not find that repository's `.git` writable.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

bwrapTest(
  "createSandbox() shell: a nested repository renamed after the view was made stays read-only",
  async () => {
    await withViewBox(async (box) => {
      const hook = join(box.ws, "sub2", ".git", "hooks", "post-checkout");
      await Deno.mkdir(join(box.ws, "sub", ".git", "hooks"), { recursive: true });
      await Deno.writeTextFile(join(box.ws, "sub", ".git", "HEAD"), "ref: refs/heads/main\n");
      box.runtime.shellTreeChanged();
      equal(
        (await box.run("touch sub/.git/hooks/x 2>/dev/null || echo read-only")).output,
        "read-only\n",
      );
      // What a background process does between two calls (on the host here: the same rename).
      await Deno.rename(join(box.ws, "sub"), join(box.ws, "sub2"));
      const result = await box.runtime.shell(
        `echo 'touch PWNED' > sub2/.git/hooks/post-checkout; echo "rc=$?"`,
        { cwd: box.ws, timeoutMs: 30_000 },
      ).then((r) => r.output, (error: Error) => `refused: ${error.message}`);
      ok(!result.includes("rc=0"), result);
      const written = await Deno.readTextFile(hook).catch(() => "");
      equal(written, "", "the hook was written");
      match(result, /rc=1|refused: .*sub\/\.git/, result);
    });
  },
);

bwrapTest(
  "createSandbox() shell: the command after a nested repository moved runs, with it read-only where it went",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "pkg", ".git", "hooks"), { recursive: true });
      await Deno.writeTextFile(join(box.ws, "pkg", ".git", "HEAD"), "ref: refs/heads/main\n");
      box.runtime.shellTreeChanged();
      equal((await box.run("echo first")).output, "first\n");
      // Between two calls (as a background `npm ci` or a rename does), without a command of
      // tern's own that would have the view made again.
      await Deno.rename(join(box.ws, "pkg"), join(box.ws, "moved"));
      const result = await box.runtime.shell(
        `touch moved/.git/hooks/post-checkout 2>/dev/null; echo "rc=$?"`,
        { cwd: box.ws, timeoutMs: 30_000 },
      );
      equal(result.output, "rc=1\n");
      equal((await box.run("echo after")).output, "after\n");
    });
  },
);
