/**
 * Adversarial: a `.git` file points (`gitdir:`) at a folder that does not exist inside the
 * workspace. git follows the pointer, so a command that made that folder, with a config whose
 * `core.fsmonitor` names a program, would run code at the person's next `git status` in the
 * file's folder. tern makes the folder, empty (the pointer still names no repository), and keeps
 * it read-only like every repository folder a `.git` file points at.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";
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
      // Two parts missing: both are made, each from inside the last.
      await Deno.mkdir(join(box.ws, "wt"));
      await Deno.writeTextFile(join(box.ws, "wt", ".git"), "gitdir: ../deep/a/wt-git\n");
      box.runtime.shellTreeChanged();
      const made = await box.run(
        "mkdir -p store/sub-git && echo '[core] fsmonitor = touch PWNED' > store/sub-git/config;" +
          " echo sub=$?; mkdir -p deep/a/wt-git && touch deep/a/wt-git/HEAD; echo wt=$?",
      );
      match(made.output, /sub=1/);
      match(made.output, /wt=1/);
      ok(!await exists(join(box.ws, "store", "sub-git", "config")), "the gitdir was written");
      ok(!await exists(join(box.ws, "deep", "a", "wt-git", "HEAD")), "the gitdir was written");
      // Made empty by tern, so that git still finds no repository there.
      equal([...Deno.readDirSync(join(box.ws, "store", "sub-git"))].length, 0);
      equal([...Deno.readDirSync(join(box.ws, "deep", "a", "wt-git"))].length, 0);
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

testWith(
  [bwrapNeed],
  "tern run: the write tool cannot make the missing folder a .git file points at either",
  async () => {
    const ws = await tempWorkspace();
    await Deno.mkdir(join(ws.dir, "wt"));
    await Deno.writeTextFile(join(ws.dir, "wt", ".git"), "gitdir: ../missing-git\n");
    const config = "[core]\n\tfsmonitor = touch PWNED\n";
    const server = await startScriptedServer([
      {
        toolCalls: [{
          id: "c1",
          name: "write",
          arguments: JSON.stringify({ path: "missing-git/config", content: config }),
        }],
      },
      { text: "done" },
    ], { chunkDelayMs: 0 });
    try {
      const run = await runTern(
        scriptedRunArgs(server.baseUrl, "write it"),
        { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" } },
      );
      equal(run.code, 0, run.stderr);
      const result = String(server.requests[1].modelRequest.messages.at(-1)?.content);
      ok(!result.startsWith("SUCCEEDED"), result);
      ok(!await exists(join(ws.dir, "missing-git", "config")), "the gitdir's config was written");
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);
