/**
 * Checkpoints and restores against a hostile repository and a hostile model: the project's git
 * config, hooks, attributes and filters never run; symlinks are stored as links and never
 * followed; a restore writes only inside the workspace, never through a symlink; odd names and
 * big files are handled. Real files and real git throughout.
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { EMPTY_TREE, ShadowStore } from "../../src/harness/rewind/shadow_store.ts";
import { writeFileSafely, writeLinkSafely } from "../../src/harness/rewind/safe_files.ts";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { Session } from "../../src/session/session.ts";
import { hostTool, strictCheckpoints, temp } from "../support/host_tool.ts";

function git(cwd: string, ...args: string[]): void {
  const out = new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).outputSync();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
}

/** A project whose git config, hooks and attributes each try to run `touch <marker>`. */
async function hostileProject(marker: string): Promise<string> {
  const ws = await temp("tern-hostile-");
  git(ws, "init", "-q");
  const run = `touch ${marker}`;
  const config = [
    "[core]",
    `\tfsmonitor = ${run}`,
    `\thooksPath = ${join(ws, "hooks")}`,
    `\tattributesFile = ${join(ws, "attrs")}`,
    '[filter "evil"]',
    `\tclean = ${run}`,
    `\tsmudge = ${run}`,
    `\tprocess = ${run}`,
    "\trequired = true",
    '[diff "evil"]',
    `\ttextconv = ${run}`,
    `\tcommand = ${run}`,
  ].join("\n");
  Deno.writeTextFileSync(join(ws, ".git", "config"), `${config}\n`, { append: true });
  Deno.mkdirSync(join(ws, "hooks"));
  for (const hook of ["pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman"]) {
    Deno.writeTextFileSync(join(ws, "hooks", hook), `#!/bin/sh\n${run}\n`, { mode: 0o755 });
    Deno.writeTextFileSync(join(ws, ".git", "hooks", hook), `#!/bin/sh\n${run}\n`, { mode: 0o755 });
  }
  Deno.writeTextFileSync(join(ws, ".gitattributes"), "* filter=evil diff=evil text eol=crlf\n");
  Deno.writeTextFileSync(join(ws, "attrs"), "* filter=evil\n");
  return ws;
}

Deno.test("ShadowStore.snapshot() runs none of the project's git config, hooks or filters", async () => {
  const home = await temp("tern-home-");
  const marker = join(home, "ran");
  const ws = await hostileProject(marker);
  // A global config naming the same programs: never read.
  Deno.writeTextFileSync(join(home, ".gitconfig"), `[core]\n\tfsmonitor = touch ${marker}\n`);
  const homeBefore = Deno.env.get("HOME");
  Deno.env.set("HOME", home);
  try {
    const store = await ShadowStore.open(join(home, "store"), ws, {
      indexName: "s",
      maxFileBytes: 1024,
    });
    Deno.writeTextFileSync(join(ws, "unix.txt"), "a\nb\n");
    const first = await store.snapshot();
    Deno.writeTextFileSync(join(ws, "unix.txt"), "a\nc\n");
    const second = await store.snapshot();
    const patch = await store.patch(first.tree, second.tree);
    ok(patch.includes("-b\n+c"), patch);
    const changes = await store.changes(second.tree, first.tree);
    // Stored as on disk: no end-of-line conversion, no clean filter.
    equal(
      new TextDecoder().decode(await store.blob(changes[0].oldId)),
      "a\nc\n",
    );
    equal(await Deno.lstat(marker).then(() => true, () => false), false, "a project program ran");
    // The project's own repository was not touched: no index written there.
    equal(await Deno.lstat(join(ws, ".git", "index")).then(() => true, () => false), false);
    // The project's .git never enters a snapshot.
    const paths = (await store.changes(EMPTY_TREE, second.tree)).map((c) => c.path);
    ok(!paths.some((path) => path.startsWith(".git/")), paths.join(","));
  } finally {
    // Other test files share this process's environment.
    if (homeBefore === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", homeBefore);
  }
});

Deno.test("ShadowStore.snapshot() stores symlinks as links, odd names whole, and skips big files", async () => {
  const ws = await temp("tern-ws-");
  const outside = await temp("tern-outside-");
  const home = await temp("tern-home-");
  Deno.writeTextFileSync(join(outside, "secret"), "outside secret\n");
  Deno.symlinkSync(outside, join(ws, "out"));
  Deno.symlinkSync(join(outside, "secret"), join(ws, "secret-link"));
  const odd = ["new\nline.txt", "-dash", 'quote"s', "tab\there", "ünï"];
  for (const name of odd) Deno.writeTextFileSync(join(ws, name), name);
  Deno.writeTextFileSync(join(ws, "big.bin"), "x".repeat(2048));
  Deno.writeTextFileSync(join(ws, ".gitignore"), "ignored.txt\n");
  Deno.writeTextFileSync(join(ws, "ignored.txt"), "not stored");
  const store = await ShadowStore.open(join(home, "store"), ws, {
    indexName: "s",
    maxFileBytes: 1024,
  });
  const snapshot = await store.snapshot();
  deepEqual(snapshot.skipped, ["big.bin"]);
  const entries = await store.changes(EMPTY_TREE, snapshot.tree);
  const byPath = Object.fromEntries(entries.map((e) => [e.path, e.newMode]));
  deepEqual(Object.keys(byPath).sort(), [".gitignore", ...odd, "out", "secret-link"].sort());
  equal(byPath["out"], "120000");
  equal(byPath["secret-link"], "120000");
  const link = entries.find((e) => e.path === "secret-link")!;
  equal(new TextDecoder().decode(await store.blob(link.newId)), join(outside, "secret"));
  // Unchanged: the same tree again.
  equal((await store.snapshot()).tree, snapshot.tree);
});

Deno.test("writeFileSafely() never writes through a symlink, in the folder or at the name", async () => {
  const ws = await temp("tern-ws-");
  const outside = await temp("tern-outside-");
  Deno.writeTextFileSync(join(outside, "target"), "outside\n");
  Deno.symlinkSync(outside, join(ws, "dir"));
  await rejects(
    writeFileSafely(ws, "dir/target", new TextEncoder().encode("pwned"), false),
    /"dir" is a symlink/,
  );
  Deno.symlinkSync(join(outside, "target"), join(ws, "name"));
  await writeFileSafely(ws, "name", new TextEncoder().encode("restored"), false);
  equal(Deno.readTextFileSync(join(outside, "target")), "outside\n");
  equal(Deno.lstatSync(join(ws, "name")).isFile, true);
  equal(Deno.readTextFileSync(join(ws, "name")), "restored");
  await rejects(writeLinkSafely(ws, "../escape", "/etc"), /not a plain relative path/);
  await rejects(writeFileSafely(ws, "a/../../x", new Uint8Array(), false), /not a plain/);
});

Deno.test("writeFileSafely() and writeLinkSafely() never restore into .git or .tern", async () => {
  const ws = await temp("tern-ws-");
  for (const path of [".git/hooks/pre-commit", "sub/.GIT/config", ".tern/settings.json"]) {
    await rejects(
      writeFileSafely(ws, path, new TextEncoder().encode("x"), true),
      /never restores into \.git or \.tern/,
    );
    await rejects(writeLinkSafely(ws, path, "/bin/sh"), /never restores into/);
  }
  deepEqual([...Deno.readDirSync(ws)], []);
  // A folder named like them deeper down is the project's own.
  await writeFileSafely(ws, "docs/.tern/x", new TextEncoder().encode("x"), false);
  equal(Deno.readTextFileSync(join(ws, "docs/.tern/x")), "x");
});

Deno.test("applyRewind() leaves the workspace's .tern as it is", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  Deno.mkdirSync(join(ws, ".tern", "memory"), { recursive: true });
  Deno.writeTextFileSync(join(ws, ".tern", "memory", "old.md"), "old\n");
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const user = session.append({ type: "message", message: { role: "user", content: "go" } });
  // A turn that changes a file while tern (memory consolidation) or the person changes .tern.
  const turn = hostTool(() => {
    Deno.writeTextFileSync(join(ws, "a.txt"), "made\n");
    Deno.writeTextFileSync(join(ws, ".tern", "memory", "new.md"), "new\n");
    Deno.removeSync(join(ws, ".tern", "memory", "old.md"));
  });
  const checkpoints = strictCheckpoints(session, ws);
  const tools = checkpoints.wrap(new ToolRegistry([turn]), user.id);
  await tools.get("bash")!.run({}, {} as never);
  await checkpoints.endTurn();
  const options = { workspace: ws, scope: "files" as const, rules: [] };
  const plan = await planRewind(session, user.id, options);
  deepEqual(plan.changes.map((change) => change.path), ["a.txt"]);
  await applyRewind(session, plan, options);
  equal(await Deno.lstat(join(ws, "a.txt")).then(() => true, () => false), false, "a.txt stays");
  equal(Deno.readTextFileSync(join(ws, ".tern", "memory", "new.md")), "new\n");
  deepEqual([...Deno.readDirSync(join(ws, ".tern", "memory"))].map((e) => e.name), ["new.md"]);
  session.close();
});

Deno.test("applyRewind() undoes a folder swapped for a symlink without touching its target", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  const outside = await temp("tern-outside-");
  Deno.mkdirSync(join(ws, "src"));
  Deno.writeTextFileSync(join(ws, "src", "main.ts"), "main\n");
  Deno.writeTextFileSync(join(outside, "main.ts"), "outside\n");
  const session = Session.create(home, { cwd: ws, ternVersion: "test" });
  const user = session.append({ type: "message", message: { role: "user", content: "go" } });
  // A hostile turn: the folder becomes a symlink out of the workspace.
  const hostile = hostTool(() => {
    Deno.removeSync(join(ws, "src"), { recursive: true });
    Deno.symlinkSync(outside, join(ws, "src"));
  });
  const checkpoints = strictCheckpoints(session, ws);
  const tools = checkpoints.wrap(new ToolRegistry([hostile]), user.id);
  await tools.get("bash")!.run({}, {} as never);
  const changes = await checkpoints.endTurn();
  deepEqual(changes.map((c) => `${c.path} ${c.status} ${c.by}`).sort(), [
    "src added command",
    "src/main.ts deleted command",
  ]);
  const options = { workspace: ws, scope: "files" as const, rules: [] };
  const plan = await planRewind(session, user.id, options);
  deepEqual(plan.conflicts, []);
  await applyRewind(session, plan, options);
  equal(Deno.lstatSync(join(ws, "src")).isDirectory, true);
  equal(Deno.readTextFileSync(join(ws, "src", "main.ts")), "main\n");
  equal(Deno.readTextFileSync(join(outside, "main.ts")), "outside\n");
  session.close();
});

Deno.test("ShadowStore.snapshot() refuses a workspace with more changed files or bytes than its limits", async () => {
  const ws = await temp("tern-ws-");
  const home = await temp("tern-home-");
  for (let i = 0; i < 5; i++) Deno.writeTextFileSync(join(ws, `f${i}`), "x".repeat(100));
  const open = (limits: { maxFiles?: number; maxBytes?: number }) =>
    ShadowStore.open(join(home, "store"), ws, { indexName: "s", maxFileBytes: 1024, ...limits });
  await rejects((await open({ maxFiles: 3 })).snapshot(), /5 files changed .* more than 3/);
  await rejects((await open({ maxBytes: 300 })).snapshot(), /500 bytes changed .* more than 300/);
  ok((await (await open({})).snapshot()).tree);
});
