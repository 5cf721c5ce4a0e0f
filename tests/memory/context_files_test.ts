import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  contextFolders,
  MAX_CONTEXT_FILE_CHARS,
  MAX_CONTEXT_TOTAL_CHARS,
  nestedContextFiles,
  readPromptFiles,
  repositoryRoot,
} from "../../src/memory/context_files.ts";
import { READ_ALL } from "../support/read_all.ts";

/** A temporary tree: `root/home` (tern's home), `root/repo` (a repository), removed after. */
async function withTree(
  body: (t: { root: string; home: string; repo: string }) => Promise<void>,
): Promise<void> {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-ctx-" }));
  const home = join(root, "home");
  const repo = join(root, "repo");
  await Deno.mkdir(home);
  await Deno.mkdir(join(repo, ".git"), { recursive: true });
  await Deno.writeTextFile(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
  try {
    await body({ root, home, repo });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("readPromptFiles() reads the user level, then every folder from the repository root down to the workspace", async () => {
  await withTree(async ({ root, home, repo }) => {
    const ws = join(repo, "apps", "web");
    await write(join(root, "AGENTS.md"), "ABOVE the repository");
    await write(join(home, "AGENTS.md"), "USER agents");
    await write(join(home, "CLAUDE.md"), "USER claude");
    await write(join(repo, "AGENTS.md"), "ROOT agents");
    await write(join(repo, "CLAUDE.md"), "ROOT agents");
    await write(join(repo, "apps", "CLAUDE.md"), "APPS claude");
    await write(join(ws, "AGENTS.md"), "WEB agents");
    const files = readPromptFiles({ workspace: ws, ternHome: home, refuse: READ_ALL });
    deepEqual(files.context.map((file) => [file.level, file.text]), [
      ["user", "USER agents"],
      ["user", "USER claude"],
      ["project", "ROOT agents"],
      // CLAUDE.md identical to the AGENTS.md beside it is left out; above the root, none.
      ["project", "APPS claude"],
      ["project", "WEB agents"],
    ]);
    equal(files.repositoryRoot, repo);
    // An empty `.git` in the workspace (a sandbox's mount point) is no repository root.
    await Deno.mkdir(join(ws, ".git"));
    const again = readPromptFiles({ workspace: ws, ternHome: home, refuse: READ_ALL });
    equal(again.repositoryRoot, repo);
    equal(again.context.length, files.context.length);
  });
});

Deno.test("readPromptFiles() without a repository reads the workspace's files only", async () => {
  await withTree(async ({ root, home }) => {
    const ws = join(root, "plain", "sub");
    await write(join(root, "plain", "AGENTS.md"), "PARENT");
    await write(join(ws, "AGENTS.md"), "HERE");
    equal(repositoryRoot(ws), undefined);
    deepEqual(contextFolders(ws, undefined), [ws]);
    const files = readPromptFiles({ workspace: ws, ternHome: home, refuse: READ_ALL });
    deepEqual(files.context.map((file) => file.text), ["HERE"]);
  });
});

Deno.test("readPromptFiles() takes the project's SYSTEM.md over the person's and appends both APPEND_SYSTEM.md", async () => {
  await withTree(async ({ home, repo }) => {
    await write(join(home, "SYSTEM.md"), "USER system");
    await write(join(home, "APPEND_SYSTEM.md"), "USER append");
    await write(join(repo, ".tern", "APPEND_SYSTEM.md"), "PROJECT append");
    let files = readPromptFiles({ workspace: repo, ternHome: home, refuse: READ_ALL });
    equal(files.system?.text, "USER system");
    deepEqual(files.append.map((file) => file.text), ["USER append", "PROJECT append"]);
    await write(join(repo, ".tern", "SYSTEM.md"), "PROJECT system");
    files = readPromptFiles({ workspace: repo, ternHome: home, refuse: READ_ALL });
    equal(files.system?.text, "PROJECT system");
  });
});

Deno.test("readPromptFiles() cuts a long file with a note and leaves files past the total out with a note", async () => {
  await withTree(async ({ home, repo }) => {
    await write(join(home, "AGENTS.md"), "q".repeat(MAX_CONTEXT_FILE_CHARS + 10));
    let files = readPromptFiles({ workspace: repo, ternHome: home, refuse: READ_ALL });
    const cut = files.context[0];
    ok(cut.cut);
    match(cut.text, /AGENTS\.md is longer: the rest was cut at 32000 characters\]$/);
    equal(cut.text.split("q").length - 1, MAX_CONTEXT_FILE_CHARS);
    // Enough full-size files to pass the total: the last ones become notes.
    const count = Math.ceil(MAX_CONTEXT_TOTAL_CHARS / MAX_CONTEXT_FILE_CHARS) + 1;
    let dir = repo;
    for (let i = 0; i < count; i++) {
      await write(join(dir, "AGENTS.md"), String(i).repeat(MAX_CONTEXT_FILE_CHARS));
      dir = join(dir, `d${i}`);
    }
    files = readPromptFiles({ workspace: join(dir, ".."), ternHome: home, refuse: READ_ALL });
    const last = files.context.at(-1)!;
    ok(last.cut);
    match(last.text, /was left out: the context files exceed 96000 characters together\]$/);
    ok(
      files.context.reduce((sum, file) => sum + file.text.length, 0) <
        MAX_CONTEXT_TOTAL_CHARS + 1000,
    );
  });
});

Deno.test("readPromptFiles() refuses a context file or SYSTEM.md that is a symlink out of its root, and says so", async () => {
  await withTree(async ({ root, home, repo }) => {
    const secret = join(root, "secret.txt");
    await write(secret, "SECRET-KEY");
    Deno.symlinkSync(secret, join(repo, "AGENTS.md"));
    Deno.symlinkSync(secret, join(home, "CLAUDE.md"));
    await Deno.mkdir(join(repo, ".tern"));
    Deno.symlinkSync(secret, join(repo, ".tern", "SYSTEM.md"));
    // A folder symlinked out: its files are outside the repository too.
    await Deno.mkdir(join(root, "outside"));
    await write(join(root, "outside", "AGENTS.md"), "SECRET-NESTED");
    Deno.symlinkSync(join(root, "outside"), join(repo, "linked"));
    const warnings: string[] = [];
    const files = readPromptFiles({
      workspace: repo,
      ternHome: home,
      warn: (line) => warnings.push(line),
      refuse: READ_ALL,
    });
    equal(files.system, undefined);
    deepEqual(files.context, []);
    equal(warnings.length, 3);
    for (const line of warnings) match(line, /leads out of the workspace .* through a symlink/);
    const nested = nestedContextFiles(
      repo,
      "linked/x.ts",
      new Set(),
      READ_ALL,
      (l) => warnings.push(l),
    );
    deepEqual(nested, []);
    match(warnings.at(-1)!, /linked\/AGENTS\.md.*leads out/);
  });
});

Deno.test("nestedContextFiles() gives each folder's files once, from below the workspace down", async () => {
  await withTree(async ({ repo }) => {
    await write(join(repo, "AGENTS.md"), "ROOT");
    await write(join(repo, "packages", "AGENTS.md"), "PACKAGES");
    await write(join(repo, "packages", "x", "CLAUDE.md"), "X");
    await write(join(repo, "packages", "x", "src", "a.ts"), "");
    await write(join(repo, "node_modules", "dep", "AGENTS.md"), "DEPENDENCY");
    const visited = new Set<string>();
    const first = nestedContextFiles(repo, "packages/x/src/a.ts", visited, READ_ALL);
    deepEqual(first.map((file) => [file.level, file.text]), [["nested", "PACKAGES"], [
      "nested",
      "X",
    ]]);
    deepEqual(nestedContextFiles(repo, join(repo, "packages", "x"), visited, READ_ALL), []);
    deepEqual(nestedContextFiles(repo, "node_modules/dep/index.js", visited, READ_ALL), []);
    deepEqual(nestedContextFiles(repo, "../elsewhere/AGENTS.md", visited, READ_ALL), []);
    deepEqual(nestedContextFiles(repo, "a.ts", visited, READ_ALL), []);
  });
});
