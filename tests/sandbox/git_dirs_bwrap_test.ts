/**
 * Real bubblewrap: repositories nested under node_modules, and a repository folder a `.git`
 * file points to inside the workspace, are read-only to a command.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { attackTest } from "./_bwrap_helpers.ts";

attackTest(
  "bwrap runner protects a .git under node_modules and the gitdir a .git file names",
  async ({ run }) => {
    const result = await run(
      "echo evil >> node_modules/dep/.git/config; echo evil > node_modules/dep/.git/hooks/x; " +
        "echo evil >> store/repo/config",
    );
    equal(result.output.match(/Read-only file system/g)?.length, 3, result.output);
  },
  async (box) => {
    await Deno.mkdir(join(box.ws, "node_modules/dep/.git/hooks"), { recursive: true });
    await Deno.writeTextFile(join(box.ws, "node_modules/dep/.git/config"), "[core]\n");
    await Deno.mkdir(join(box.ws, "store/repo"), { recursive: true });
    await Deno.writeTextFile(join(box.ws, "store/repo/config"), "[core]\n");
    await Deno.mkdir(join(box.ws, "checkout"));
    await Deno.writeTextFile(join(box.ws, "checkout/.git"), "gitdir: ../store/repo\n");
    return {};
  },
);
