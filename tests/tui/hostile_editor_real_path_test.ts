/**
 * The permission dialog's "real path" line for a path whose way holds a dangling symbolic link
 * (a repository's `out -> /home/me/.config/app`, not there yet): it leads outside the workspace,
 * and the dialog says so.
 */
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";
import { realPathFacts } from "../../src/cli/interactive/real_paths.ts";
import type { ReviewRequest } from "../../src/sandbox/review.ts";

function write(path: string): ReviewRequest {
  return {
    tool: "write",
    args: { path, content: "x" },
    summary: `write ${path}`,
    reason: "writes a file",
    profile: ":workspace",
    rememberable: true,
  };
}

Deno.test("realPathFacts() follows a dangling link to where the path really leads", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    await Deno.symlink(join(root, "outside", "app"), join(ws, "out"));
    await Deno.symlink("out/new", join(ws, "chain"));
    await Deno.symlink("loop", join(ws, "loop"));
    deepEqual(realPathFacts(write("out/file.txt"), ws), [
      `${root}/outside/app/file.txt (outside the workspace)`,
    ]);
    deepEqual(realPathFacts(write("chain"), ws), [
      `${root}/outside/app/new (outside the workspace)`,
    ]);
    deepEqual(realPathFacts(write("out"), ws), [`${root}/outside/app (outside the workspace)`]);
    // A loop ends: its path is taken as written.
    deepEqual(realPathFacts(write("loop/x"), ws), []);
    deepEqual(realPathFacts(write("new/file.txt"), ws), [], "a new path in the workspace");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
