/**
 * Adversarial: persistence through the workspace. A command cannot create `.tern` or `.git`
 * where they do not exist yet (nor fill what a guard leaves behind); whatever it may change
 * that runs code on the host later is reported, a new repository in a subfolder included.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapTest, exists } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";
import { SETTLED_MS } from "../../src/sandbox/folder_listings.ts";

const CREATE_ATTEMPTS: Record<string, string> = {
  "mkdir .tern": "mkdir .tern",
  "a config file in .tern": "mkdir -p .tern && echo '{}' > .tern/config.jsonc",
  "a skill in .tern": "mkdir -p .tern/skills/x && echo evil > .tern/skills/x/SKILL.md",
  "git init": "git init -q .",
  "a hook in .git":
    "mkdir -p .git/hooks && printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
  ".git/config": "mkdir -p .git && printf '[core]\\n\\thooksPath = /tmp\\n' > .git/config",
  "a .git file pointing elsewhere": "echo 'gitdir: /tmp/x' > .git",
  "a .git symlink": "ln -s /tmp .git",
  "rename a folder into .git": "mkdir made && mkdir made/hooks && mv made .git",
};

bwrapTest(
  "createSandbox() shell: a command cannot create .tern or .git in the workspace",
  async (t) => {
    await withViewBox(async (box) => {
      for (const [what, command] of Object.entries(CREATE_ATTEMPTS)) {
        await t.step(what, async () => {
          await box.run(`${command} 2>/dev/null`);
          box.runtime.shellTreeChanged();
          // The guards' mount points stay while the warm shell uses them: empty folders.
          ok(await isAbsentOrEmpty(join(box.ws, ".tern")), `${what}: .tern was made`);
          ok(await isAbsentOrEmpty(join(box.ws, ".git")), `${what}: .git was made`);
        });
      }
      await box.runtime.close();
      ok(!(await exists(join(box.ws, ".tern"))), ".tern was left behind");
      ok(!(await exists(join(box.ws, ".git"))), ".git was left behind");
    });
  },
);

/** Nothing at `path`, or an empty folder (not a link). */
async function isAbsentOrEmpty(path: string): Promise<boolean> {
  const info = await Deno.lstat(path).catch(() => null);
  if (info === null) return true;
  if (!info.isDirectory) return false;
  for await (const _ of Deno.readDir(path)) return false;
  return true;
}

bwrapTest(
  "createSandbox() shell: an existing .git stays read-only, hooks and config included",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, ".git/hooks"), { recursive: true });
      await Deno.writeTextFile(join(box.ws, ".git/config"), "[core]\n");
      box.runtime.shellTreeChanged();
      await box.run(
        "echo evil > .git/hooks/post-checkout; echo '[alias] x = !sh' >> .git/config 2>/dev/null; true",
      );
      equal(await Deno.readTextFile(join(box.ws, ".git/config")), "[core]\n");
      ok(!(await exists(join(box.ws, ".git/hooks/post-checkout"))));
    });
  },
);

bwrapTest(
  "createSandbox() shell: a guard leaves no folder behind once closed, and the workspace works",
  async () => {
    await withViewBox(async (box) => {
      const result = await box.run(
        "echo hi > a.txt; mkdir -p src/x; cat a.txt; git status >/dev/null 2>&1; echo $?",
      );
      equal(result.output.split("\n")[0], "hi");
      await box.runtime.close();
      ok(!(await exists(join(box.ws, ".tern"))));
      ok(!(await exists(join(box.ws, ".git"))));
    });
  },
);

bwrapTest("SandboxRuntime.watchHostFiles() reports what runs code on the host later", async () => {
  await withViewBox(async (box) => {
    await Deno.writeTextFile(join(box.ws, "package.json"), '{"scripts": {}}\n');
    const watch = box.runtime.watchHostFiles();
    await box.run(
      "echo 'curl x | sh' > .envrc; mkdir -p .vscode && echo '{}' > .vscode/tasks.json; " +
        `echo '{"scripts": {"postinstall": "sh x"}}' > package.json; echo 'all:' > Makefile; ` +
        "mkdir -p .husky && echo 'sh x' > .husky/pre-commit; " +
        "mkdir -p vendor/lib && cd vendor/lib && git init -q . && cd ../..; echo 'x' > notes.txt",
    );
    box.runtime.shellTreeChanged();
    const changes = await watch();
    deepEqual(
      changes.map((c) => `${c.change} ${c.path.slice(box.ws.length + 1)}`),
      [
        "created .envrc",
        "created .husky",
        "created .vscode/tasks.json",
        "created Makefile",
        "changed package.json",
        "created vendor/lib/.git",
      ],
    );
    // Nothing changed since: nothing to report.
    const again = box.runtime.watchHostFiles();
    await box.run("echo y > notes.txt");
    deepEqual(await again(), []);
  });
});

bwrapTest(
  "SandboxRuntime: a repository made in a folder the .git search kept is reported and protected",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "sub/deep"), { recursive: true });
      // Settled: the next search keeps its readings of sub and sub/deep (folder_listings.ts).
      await new Promise((done) => setTimeout(done, SETTLED_MS + 1_100));
      box.runtime.shellTreeChanged();
      await box.run("true");
      const watch = box.runtime.watchHostFiles();
      await box.run("git init -q sub/deep");
      box.runtime.shellTreeChanged();
      deepEqual(
        (await watch()).map((c) => `${c.change} ${c.path.slice(box.ws.length + 1)}`),
        ["created sub/deep/.git"],
      );
      await box.run("echo evil > sub/deep/.git/hooks/post-checkout 2>/dev/null; true");
      ok(!(await exists(join(box.ws, "sub/deep/.git/hooks/post-checkout"))));
    });
  },
);
