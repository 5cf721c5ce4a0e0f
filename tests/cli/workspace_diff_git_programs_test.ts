/**
 * /diff on a hostile repository: a partial clone whose "promisor" remote is a command, and a
 * nested repository whose own config names an external diff driver. Neither may run.
 */
import { deepEqual, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { captureBaseline, workspaceDiff } from "../../src/cli/workspace_diff.ts";

const decoder = new TextDecoder();
/** tern's own object store for every snapshot of this file's tests (see GitAccess.objects). */
const OBJECTS = await Deno.makeTempDir({ prefix: "tern-diff-objects-" });
const ACCESS = { objects: OBJECTS };
globalThis.addEventListener("unload", () => Deno.removeSync(OBJECTS, { recursive: true }));

async function git(dir: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "commit.gpgSign=false", "-c", "user.name=T", "-c", "user.email=t@t", ...args],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout);
}

/** Runs `body` with a fresh folder for the workspace and one for markers. */
async function withDirs(body: (dir: string, markers: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-progs-" }));
  const markers = await Deno.makeTempDir({ prefix: "tern-pwned-" });
  try {
    await body(dir, markers);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

/**
 * A partial clone at `repo` whose tracked `.gitattributes` is absent from the work tree
 * (skip-worktree) and missing from the object store: any command that reads attributes fetches
 * it from the promisor remote, which `remote` configures to run a command.
 */
async function partialClone(repo: string, remote: Record<string, string>): Promise<void> {
  await git(repo, "init", "-q", ".");
  await Deno.writeTextFile(join(repo, ".gitattributes"), "*.txt text\n");
  await Deno.writeTextFile(join(repo, "a.txt"), "a\n");
  await git(repo, "add", ".gitattributes", "a.txt");
  await git(repo, "commit", "-q", "-m", "start");
  await git(repo, "update-index", "--skip-worktree", ".gitattributes");
  await Deno.remove(join(repo, ".gitattributes"));
  const blob = (await git(repo, "rev-parse", "HEAD:.gitattributes")).trim();
  await Deno.remove(join(repo, ".git", "objects", blob.slice(0, 2), blob.slice(2)));
  await git(repo, "config", "core.repositoryformatversion", "1");
  await git(repo, "config", "extensions.partialClone", "origin");
  await git(repo, "config", "remote.origin.promisor", "true");
  for (const [key, value] of Object.entries(remote)) await git(repo, "config", key, value);
  // As after unpacking an archive: a.txt's stat data no longer matches the index.
  await Deno.utime(join(repo, "a.txt"), new Date(2001, 0, 1), new Date(2001, 0, 1));
}

/** Ways a promisor remote can name a program, each leaving a marker named after it. */
function remotes(marker: (name: string) => string): Record<string, Record<string, string>> {
  return {
    uploadpack: {
      "remote.origin.url": "/nonexistent",
      "remote.origin.uploadpack": `touch ${marker("uploadpack")}; false`,
    },
    "file-allowed": {
      "remote.origin.url": "/nonexistent",
      "remote.origin.uploadpack": `touch ${marker("file-allowed")}; false`,
      "protocol.file.allow": "always",
    },
    ext: {
      "remote.origin.url": `ext::sh -c touch% ${marker("ext")}`,
      "protocol.ext.allow": "always",
    },
    vcs: {
      "remote.origin.url": `sh -c touch% ${marker("vcs")}`,
      "remote.origin.vcs": "ext",
      "protocol.ext.allow": "always",
    },
  };
}

Deno.test("captureBaseline() and workspaceDiff() never fetch a partial clone's missing objects", async () => {
  await withDirs(async (dir, markers) => {
    const marker = (name: string) => join(markers, name);
    for (const [name, remote] of Object.entries(remotes(marker))) {
      const repo = join(dir, name);
      await Deno.mkdir(repo);
      await partialClone(repo, remote);
      const baseline = await captureBaseline(repo, ACCESS).catch(() => undefined);
      if (baseline) await workspaceDiff(repo, baseline, ACCESS).catch(() => undefined);
    }
    deepEqual(await listDir(markers), []);

    // The traps are real: plain git springs each of them.
    for (const name of Object.keys(remotes(marker))) {
      const repo = join(dir, name);
      await new Deno.Command("git", { args: ["add", "-u"], cwd: repo, stderr: "null" }).output();
    }
    deepEqual(await listDir(markers), Object.keys(remotes(marker)).sort());
  });
});

Deno.test("workspaceDiff() shows a nested repository's move as commit ids, running nothing of it", async () => {
  await withDirs(async (dir, markers) => {
    const sub = join(dir, "node_modules", "sub");
    await Deno.mkdir(sub, { recursive: true });
    await git(sub, "init", "-q", ".");
    await Deno.writeTextFile(join(sub, "f"), "one\n");
    await Deno.writeTextFile(join(sub, ".gitattributes"), "* diff=evil\n");
    await git(sub, "add", "f", ".gitattributes");
    await git(sub, "commit", "-q", "-m", "one");
    await git(sub, "config", "diff.evil.command", `touch ${join(markers, "command")}; true`);
    await git(sub, "config", "diff.evil.textconv", `touch ${join(markers, "textconv")}; cat`);
    await git(dir, "init", "-q", ".");
    await Deno.writeTextFile(join(dir, "a.txt"), "a\n");
    await git(dir, "add", "a.txt", "node_modules/sub");
    await git(dir, "commit", "-q", "-m", "start");
    for (const mode of ["diff", "log"]) {
      await git(dir, "config", "diff.submodule", mode);
      await git(dir, "config", "submodule.recurse", "true");
      const baseline = (await captureBaseline(dir, ACCESS))!;
      await Deno.writeTextFile(join(sub, "f"), `${mode}\n`);
      await git(sub, "commit", "-q", "-am", mode);
      const diff = await workspaceDiff(dir, baseline, ACCESS);
      deepEqual(diff.files, ["node_modules/sub"]);
      match(diff.patch, /^\+Subproject commit [0-9a-f]{40}$/m);
    }
    deepEqual(await listDir(markers), []);

    // The trap is real: plain git springs it.
    await git(dir, "config", "diff.submodule", "diff");
    await git(dir, "diff", "HEAD");
    ok((await listDir(markers)).includes("command"));
  });
});
