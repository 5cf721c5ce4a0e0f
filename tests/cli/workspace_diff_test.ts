import { deepEqual, equal, match, notEqual, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { TernError } from "../../src/core/errors.ts";
import { captureBaseline, workspaceDiff } from "../../src/cli/workspace_diff.ts";

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const decoder = new TextDecoder();
/** tern's own object store for every snapshot of this file's tests (see GitAccess.objects). */
const OBJECTS = await Deno.makeTempDir({ prefix: "tern-diff-objects-" });
const ACCESS = { objects: OBJECTS };
globalThis.addEventListener("unload", () => Deno.removeSync(OBJECTS, { recursive: true }));

/** Runs git in `dir` for the test's own setup and checks; throws on failure. */
function git(dir: string, ...args: string[]): Promise<string> {
  return gitWith({}, dir, ...args);
}

/** {@linkcode git} that also reads the snapshots' objects (which are not in the repository). */
function gitSeeing(dir: string, ...args: string[]): Promise<string> {
  return gitWith({ GIT_ALTERNATE_OBJECT_DIRECTORIES: OBJECTS }, dir, ...args);
}

async function gitWith(
  env: Record<string, string>,
  dir: string,
  ...args: string[]
): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false", ...args],
    cwd: dir,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout);
}

/** A fresh repository with the given files committed (none: no commit at all). */
async function withRepo(
  files: Record<string, string>,
  body: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-test-" }));
  try {
    await git(dir, "init", "-q", ".");
    await git(dir, "config", "user.name", "Tern Test");
    await git(dir, "config", "user.email", "tern@example.com");
    await writeFiles(dir, files);
    if (Object.keys(files).length > 0) {
      await git(dir, "add", "-A");
      await git(dir, "commit", "-q", "-m", "start");
    }
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
}

/** Everything about the repository that captureBaseline and workspaceDiff must leave alone. */
async function repoState(dir: string): Promise<unknown> {
  const gitDir = join(dir, ".git");
  const entries = [];
  for await (const entry of Deno.readDir(gitDir)) entries.push(entry.name);
  return {
    index: await Deno.readFile(join(gitDir, "index")),
    status: await git(dir, "--no-optional-locks", "status", "--porcelain", "-uall"),
    refs: await git(dir, "for-each-ref"),
    head: await Deno.readTextFile(join(gitDir, "HEAD")),
    gitEntries: entries.sort(),
    // No object is added: commands can read `.git`, and a snapshot holds untracked files.
    objects: (await git(dir, "count-objects", "-v")).split("\n").filter((line) =>
      /^(count|in-pack):/.test(line)
    ),
  };
}

Deno.test("captureBaseline() is undefined outside a git work tree and without git", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-diff-test-" });
  try {
    equal(await captureBaseline(dir, ACCESS), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    equal(await captureBaseline(repo, { ...ACCESS, path: "/nonexistent" }), undefined);
    equal(await captureBaseline(join(repo, ".git"), ACCESS), undefined);
  });
});

Deno.test("captureBaseline() snapshots a clean repository as its HEAD tree", async () => {
  await withRepo({ "a.txt": "a\n", "src/b.ts": "b\n" }, async (repo) => {
    const baseline = (await captureBaseline(repo, ACCESS))!;
    equal(baseline.tree, (await git(repo, "rev-parse", "HEAD^{tree}")).trim());
    deepEqual(baseline.untracked, {});
    deepEqual(await workspaceDiff(repo, baseline, ACCESS), { patch: "", files: [], notes: [] });
  });
});

Deno.test("captureBaseline() snapshots a dirty repository as it is on disk", async () => {
  await withRepo({ "a.txt": "a\n", "b.txt": "b\n" }, async (repo) => {
    await writeFiles(repo, { "a.txt": "a changed\n", "u.txt": "untracked\n" });
    await Deno.remove(join(repo, "b.txt"));
    const baseline = (await captureBaseline(repo, ACCESS))!;
    const head = (await git(repo, "rev-parse", "HEAD^{tree}")).trim();
    const changed = await gitSeeing(repo, "diff", "--name-status", head, baseline.tree);
    equal(changed, "M\ta.txt\nD\tb.txt\nA\tu.txt\n");
    deepEqual(Object.keys(baseline.untracked), ["u.txt"]);
    ok(baseline.untracked["u.txt"].kept);
    deepEqual(await workspaceDiff(repo, baseline, ACCESS), { patch: "", files: [], notes: [] });
  });
});

Deno.test("captureBaseline() works in a repository without commits", async () => {
  await withRepo({}, async (repo) => {
    equal((await captureBaseline(repo, ACCESS))!.tree, EMPTY_TREE);
    await writeFiles(repo, { "staged.txt": "s\n" });
    await git(repo, "add", "staged.txt");
    const baseline = (await captureBaseline(repo, ACCESS))!;
    equal(await gitSeeing(repo, "ls-tree", "--name-only", baseline.tree), "staged.txt\n");
    await writeFiles(repo, { "staged.txt": "s\nmore\n" });
    const diff = await workspaceDiff(repo, baseline, ACCESS);
    deepEqual(diff.files, ["staged.txt"]);
    match(diff.patch, /^ s\n\+more$/m);
  });
});

Deno.test("workspaceDiff() shows edited, deleted and new files and nothing for unchanged ones", async () => {
  const files = { "edit.txt": "one\ntwo\n", "gone.txt": "bye\n", "same.txt": "same\n" };
  await withRepo({ ...files, ".gitignore": "*.log\n" }, async (repo) => {
    await writeFiles(repo, { "early.txt": "untracked at the start\n", "keep.log": "ignored\n" });
    const baseline = (await captureBaseline(repo, ACCESS))!;
    await writeFiles(repo, {
      "edit.txt": "one\nTWO\n",
      "early.txt": "untracked, then edited\n",
      "dir/new.txt": "brand new\n",
      "new.log": "ignored\n",
      "same.txt": "same\n",
    });
    await Deno.remove(join(repo, "gone.txt"));
    const diff = await workspaceDiff(repo, baseline, ACCESS);
    deepEqual(diff.files, ["dir/new.txt", "early.txt", "edit.txt", "gone.txt"]);
    deepEqual(diff.notes, []);
    match(diff.patch, /^diff --git a\/edit\.txt b\/edit\.txt\n[^]*^-two\n\+TWO$/m);
    match(diff.patch, /^diff --git a\/gone\.txt b\/gone\.txt\ndeleted file mode 100644\n/m);
    match(diff.patch, /^diff --git a\/dir\/new\.txt b\/dir\/new\.txt\nnew file mode 100644\n/m);
    match(diff.patch, /^-untracked at the start\n\+untracked, then edited$/m);
    ok(!diff.patch.includes("same.txt") && !diff.patch.includes(".log"), diff.patch);
  });
});

Deno.test("workspaceDiff() sees a same-size edit whose stat data matches the index (racy git)", async () => {
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    // The edit keeps size and mtime, and ctime is not compared: only the index's own time
    // (no older than the file's) tells git to read the content. The scratch index must keep it.
    await git(repo, "config", "core.trustctime", "false");
    const then = new Date(Math.floor(Date.now() / 1000) * 1000 - 100_000);
    const file = join(repo, "f.txt");
    await Deno.writeTextFile(file, "one\n");
    await Deno.utime(file, then, then);
    await git(repo, "add", "f.txt");
    await git(repo, "commit", "-q", "-m", "f");
    await Deno.utime(join(repo, ".git", "index"), then, then);
    const baseline = (await captureBaseline(repo, ACCESS))!;
    await Deno.writeTextFile(file, "ONE\n");
    await Deno.utime(file, then, then);
    const diff = await workspaceDiff(repo, baseline, ACCESS);
    deepEqual(diff.files, ["f.txt"]);
    match(diff.patch, /^-one\n\+ONE$/m);
  });
});

Deno.test("workspaceDiff() limits a workspace below the repository root to its folder", async () => {
  await withRepo({ "top.txt": "top\n", "pkg/a.txt": "a\n" }, async (repo) => {
    const workspace = join(repo, "pkg");
    const baseline = (await captureBaseline(workspace, ACCESS))!;
    await writeFiles(repo, { "top.txt": "changed\n", "pkg/a.txt": "A\n", "pkg/b.txt": "b\n" });
    const diff = await workspaceDiff(workspace, baseline, ACCESS);
    deepEqual(diff.files, ["a.txt", "b.txt"]);
    match(diff.patch, /^diff --git a\/a\.txt b\/a\.txt$/m);
  });
});

Deno.test("workspaceDiff() notes untracked files too large to keep instead of showing them", async () => {
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    const big = "x".repeat(1_500_000);
    await writeFiles(repo, { "big.bin": big, "old.bin": big });
    const baseline = (await captureBaseline(repo, ACCESS))!;
    equal(baseline.untracked["big.bin"].kept, false);
    await writeFiles(repo, { "big.bin": `${big}y`, "huge.bin": big });
    await Deno.remove(join(repo, "old.bin"));
    const diff = await workspaceDiff(repo, baseline, ACCESS);
    deepEqual(diff.files, ["big.bin", "huge.bin", "old.bin"]);
    deepEqual(diff.notes, [
      "big.bin: changed since the session began (untracked, no earlier content kept)",
      "huge.bin: new since the session began (untracked, 1,500,000 bytes: not shown)",
      "old.bin: removed since the session began (untracked, no earlier content kept)",
    ]);
    equal(diff.patch, "");
  });
});

Deno.test("workspaceDiff() cuts a long patch at a whole line with a marker", async () => {
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    const baseline = (await captureBaseline(repo, ACCESS))!;
    const lines = Array.from({ length: 5_000 }, (_, i) => `line ${i}\n`).join("");
    await writeFiles(repo, { "long.txt": lines });
    const diff = await workspaceDiff(repo, baseline, { ...ACCESS, maxPatchBytes: 1_000 });
    deepEqual(diff.files, ["long.txt"]);
    ok(diff.patch.endsWith("\n[diff cut at 1,000 bytes: the rest is not shown]\n"), diff.patch);
    const kept = diff.patch.slice(0, diff.patch.lastIndexOf("[diff cut"));
    ok(kept.length <= 1_000 && kept.endsWith("\n"));
    match(kept, /^\+line \d+$/m);
  });
});

Deno.test("captureBaseline() and workspaceDiff() change nothing in the repository", async () => {
  await withRepo({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" }, async (repo) => {
    // Stale stat data on an unchanged file: `git stash create` or `git diff` would rewrite
    // the index to refresh it.
    await Deno.utime(join(repo, "c.txt"), new Date(2001, 0, 1), new Date(2001, 0, 1));
    await writeFiles(repo, { "a.txt": "a changed\n", "u.txt": "untracked\n" });
    await git(repo, "add", "a.txt");
    await writeFiles(repo, { "a.txt": "a changed again\n" });
    const before = await repoState(repo);
    const baseline = (await captureBaseline(repo, ACCESS))!;
    await writeFiles(repo, { "b.txt": "b changed\n", "v.txt": "new\n" });
    const middle = await repoState(repo);
    const diff = await workspaceDiff(repo, baseline, ACCESS);
    deepEqual(diff.files, ["b.txt", "v.txt"]);
    deepEqual(await repoState(repo), middle);
    const { status: _a, ...stillBefore } = before as Record<string, unknown>;
    const { status: _b, ...stillMiddle } = middle as Record<string, unknown>;
    deepEqual(stillMiddle, stillBefore);
    notEqual((before as { status: string }).status, (middle as { status: string }).status);
  });
});

Deno.test("captureBaseline() and workspaceDiff() run none of the repository's programs", async () => {
  const markers = await Deno.makeTempDir({ prefix: "tern-pwned-" });
  const marker = (name: string) => join(markers, name);
  try {
    await withRepo({ "a.txt": "a\n", "b.txt": "b\n" }, async (repo) => {
      await writeFiles(repo, { ".gitattributes": "* filter=evil diff=evil\n" });
      await git(repo, "config", "core.fsmonitor", `touch ${marker("fsmonitor")}; true`);
      await git(repo, "config", "filter.evil.clean", `touch ${marker("clean")}; cat`);
      await git(repo, "config", "filter.evil.smudge", `touch ${marker("smudge")}; cat`);
      await git(repo, "config", "filter.evil.required", "true");
      await git(repo, "config", "diff.evil.textconv", `touch ${marker("textconv")}; cat`);
      await git(repo, "config", "diff.external", `touch ${marker("external")}; true`);
      await git(repo, "config", "core.pager", `touch ${marker("pager")}; cat`);
      const hook = join(repo, ".git", "hooks", "post-index-change");
      await Deno.writeTextFile(hook, `#!/bin/sh\ntouch ${marker("hook")}\n`, { mode: 0o755 });
      await Deno.chmod(hook, 0o755);

      await writeFiles(repo, { "a.txt": "a changed\n", "u.txt": "untracked\n" });
      const baseline = (await captureBaseline(repo, ACCESS))!;
      await writeFiles(repo, { "b.txt": "b changed\n", "a.txt": "a\n" });
      const diff = await workspaceDiff(repo, baseline, ACCESS);
      deepEqual(diff.files, ["a.txt", "b.txt"]);
      match(diff.patch, /^\+b changed$/m);
      deepEqual(await listDir(markers), []);

      // The traps are real: plain git commands spring them.
      for (const args of [["status"], ["diff"], ["diff", "--no-ext-diff"], ["add", "-u"]]) {
        await new Deno.Command("git", { args, cwd: repo, stdout: "null", stderr: "null" }).output();
      }
      const sprung = await listDir(markers);
      for (const name of ["fsmonitor", "clean", "textconv", "external", "hook"]) {
        ok(sprung.includes(name), `${name} never ran: ${sprung}`);
      }
    });
  } finally {
    await Deno.remove(markers, { recursive: true });
  }
});

Deno.test("captureBaseline() and workspaceDiff() read none of the repository's config: a driver after 9 MB of it, or in an [include], never runs", async () => {
  const markers = await Deno.makeTempDir({ prefix: "tern-pwned-" });
  const marker = (name: string) => join(markers, name);
  try {
    for (const how of ["padded", "included"] as const) {
      await withRepo({ "a.txt": "a\n" }, async (repo) => {
        await writeFiles(repo, { ".gitattributes": "* filter=evil\n", "app.py": "print(1)\n" });
        const driver = `[filter "evil"]\n\tclean = touch ${marker(how)}; cat\n`;
        const config = join(repo, ".git", "config");
        if (how === "padded") {
          // Past what a listing of the config could hold.
          const pad = `[filter "pad"]\n\tsmudge = ${"x".repeat(9_000_000)}\n`;
          await Deno.writeTextFile(config, pad + driver, { append: true });
        } else {
          await Deno.writeTextFile(join(repo, "inc.cfg"), driver);
          await Deno.writeTextFile(config, "[include]\n\tpath = ../inc.cfg\n", { append: true });
        }
        const baseline = (await captureBaseline(repo, ACCESS))!;
        await writeFiles(repo, { "a.txt": "a changed\n" });
        const diff = await workspaceDiff(repo, baseline, ACCESS);
        deepEqual(diff.files, ["a.txt"]);
        deepEqual(await listDir(markers), [], how);
        // The trap is real: git itself springs it.
        await new Deno.Command("git", { args: ["add", "-u"], cwd: repo, stderr: "null" }).output();
        ok((await listDir(markers)).includes(how), `${how}: the driver never ran in git`);
        await Deno.remove(marker(how));
      });
    }
  } finally {
    await Deno.remove(markers, { recursive: true });
  }
});

Deno.test("captureBaseline() keeps what the repository's info/exclude ignores out of the snapshot", async () => {
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    await Deno.writeTextFile(join(repo, ".git", "info", "exclude"), "local.log\n");
    await writeFiles(repo, { "local.log": "x\n", "new.txt": "n\n" });
    const baseline = (await captureBaseline(repo, ACCESS))!;
    deepEqual(Object.keys(baseline.untracked), ["new.txt"]);
  });
});

Deno.test("captureBaseline() refuses a FIFO in place of the index, without waiting on it", async () => {
  await withRepo({ "a.txt": "a\n" }, async (repo) => {
    const index = join(repo, ".git", "index");
    await Deno.remove(index);
    const made = await new Deno.Command("mkfifo", { args: [index] }).output();
    ok(made.success, "mkfifo failed");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("captureBaseline() waited on the FIFO")), 20_000);
    });
    try {
      await rejects(
        Promise.race([captureBaseline(repo, ACCESS), hung]),
        (error: unknown) =>
          error instanceof TernError && /index .* is not a regular file/.test(error.message),
      );
    } finally {
      clearTimeout(timer);
    }
  });
});

Deno.test("captureBaseline() kills a git that runs past the timeout", async () => {
  const bin = await Deno.makeTempDir({ prefix: "tern-fake-git-" });
  try {
    const pidFile = join(bin, "pid");
    await Deno.writeTextFile(
      join(bin, "git"),
      `#!/bin/sh\necho $$ > ${pidFile}\nexec /bin/sleep 60\n`,
      {
        mode: 0o755,
      },
    );
    await Deno.chmod(join(bin, "git"), 0o755);
    await rejects(
      captureBaseline(bin, { ...ACCESS, path: bin, timeoutMs: 1_000 }),
      (error: unknown) => {
        ok(error instanceof TernError);
        equal(error.message, 'Cannot compare the workspace: "git rev-parse" timed out');
        return true;
      },
    );
    const pid = Number((await Deno.readTextFile(pidFile)).trim());
    ok(pid > 0);
    const probe = new Deno.Command("sh", { args: ["-c", `kill -0 ${pid}`], stderr: "null" });
    equal((await probe.output()).success, false, `process ${pid} is still running`);
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test("workspaceDiff() names a FIFO .gitignore a command made instead of waiting on it", async () => {
  await withRepo({ "a.txt": "one\n" }, async (repo) => {
    const baseline = (await captureBaseline(repo, ACCESS))!;
    await Deno.mkdir(join(repo, "sub"));
    const made = await new Deno.Command("mkfifo", { args: [join(repo, "sub", ".gitignore")] })
      .output();
    equal(made.code, 0);
    await writeFiles(repo, { "a.txt": "two\n" });
    // Its timeout long enough that only the search can end the wait.
    await rejects(
      workspaceDiff(repo, baseline, { ...ACCESS, timeoutMs: 60_000 }),
      (error: Error) =>
        error instanceof TernError &&
        /"sub\/\.gitignore" is a FIFO, which git would wait on/.test(error.message),
    );
  });
});
