/**
 * Adversarial: a bare repository inside the workspace (a folder holding `HEAD`, `objects` and
 * `refs`, not named `.git`: a mirror, a local remote). Its hooks run when someone pushes to it and
 * its config when someone runs git in it, so it is protected like a `.git` folder: read-only for
 * commands, and not searched further.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { hostFileChanges, snapshotHostFiles } from "../../src/sandbox/persistence.ts";
import { gitDirsUnder } from "../../src/sandbox/protected_paths.ts";
import { temp } from "../support/host_tool.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  equal(out.success, true, new TextDecoder().decode(out.stderr));
}

Deno.test("gitDirsUnder() finds a bare repository below the roots, as git would take one", async () => {
  const ws = await temp("tern-bare-");
  try {
    await git(ws, "init", "-q", "--bare", "mirror.git");
    // What git does not take for a repository: no `refs`, or `HEAD` a folder.
    await Deno.mkdir(join(ws, "half", "objects"), { recursive: true });
    await Deno.writeTextFile(join(ws, "half", "HEAD"), "ref: refs/heads/main\n");
    await Deno.mkdir(join(ws, "dirs", "HEAD"), { recursive: true });
    await Deno.mkdir(join(ws, "dirs", "objects"));
    await Deno.mkdir(join(ws, "dirs", "refs"));
    // Made by hand, `objects` and `refs` links (git follows them): a repository all the same.
    await Deno.mkdir(join(ws, "deep", "hand", "o"), { recursive: true });
    await Deno.mkdir(join(ws, "deep", "hand", "r"));
    await Deno.writeTextFile(join(ws, "deep", "hand", "HEAD"), "ref: refs/heads/main\n");
    await Deno.symlink("o", join(ws, "deep", "hand", "objects"));
    await Deno.symlink("r", join(ws, "deep", "hand", "refs"));
    // Nothing inside a bare repository is searched further.
    await Deno.mkdir(join(ws, "mirror.git", "inner", ".git"), { recursive: true });
    deepEqual(await gitDirsUnder([ws]), [join(ws, "deep", "hand"), join(ws, "mirror.git")]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("a bare repository made in the workspace is reported as a repository whose hooks run", async () => {
  const ws = await temp("tern-bare-new-");
  try {
    const before = snapshotHostFiles(ws, await gitDirsUnder([ws]));
    await git(ws, "init", "-q", "--bare", "made.git");
    const after = snapshotHostFiles(ws, await gitDirsUnder([ws]));
    deepEqual(hostFileChanges(before, after), [{
      path: join(ws, "made.git"),
      change: "created",
      runs: "git (a repository's hooks and config)",
    }]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("gitDirsUnder() never takes a root itself for a bare repository", async () => {
  const ws = await temp("tern-bare-root-");
  try {
    await git(ws, "init", "-q", "--bare", ".");
    deepEqual(await gitDirsUnder([ws]), []);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

bwrapTest(
  "createSandbox() shell: a command cannot change a bare repository's hooks or config",
  async () => {
    await withViewBox(async (box) => {
      await git(box.ws, "init", "-q", "--bare", "remote.git");
      box.runtime.shellTreeChanged();
      const result = await box.run(
        "echo 'touch PWNED' > remote.git/hooks/post-receive; echo hook=$?; " +
          "echo '[core] fsmonitor = touch PWNED' >> remote.git/config; echo config=$?; " +
          "echo x > elsewhere; echo other=$?",
      );
      match(result.output, /hook=1/);
      match(result.output, /config=1/);
      match(result.output, /other=0/);
      equal(await exists(join(box.ws, "remote.git", "hooks", "post-receive")), false);
      equal(
        (await Deno.readTextFile(join(box.ws, "remote.git", "config"))).includes("PWNED"),
        false,
      );
    });
  },
);

bwrapTest(
  "createSandbox() shell: a bare repository moved after the view was made stays read-only where it went",
  async () => {
    await withViewBox(async (box) => {
      await Deno.mkdir(join(box.ws, "pkg"));
      await git(join(box.ws, "pkg"), "init", "-q", "--bare", "remote.git");
      box.runtime.shellTreeChanged();
      equal((await box.run("echo first")).output, "first\n");
      // Between two calls (as a background process does), without a command of tern's own
      // that would have the view made again.
      await Deno.rename(join(box.ws, "pkg"), join(box.ws, "moved"));
      const result = await box.runtime.shell(
        `touch moved/remote.git/hooks/post-receive 2>/dev/null; echo "rc=$?"`,
        { cwd: box.ws, timeoutMs: 30_000 },
      );
      equal(result.output, "rc=1\n");
      equal(await exists(join(box.ws, "moved", "remote.git", "hooks", "post-receive")), false);
      equal((await box.run("echo after")).output, "after\n");
    });
  },
);
