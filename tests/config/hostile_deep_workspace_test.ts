/**
 * A repository nested very deep: the context-file walk asks `readWorkspaceText` for a file in
 * every folder from the repository root down to the workspace, each confined to that folder.
 * A missing file must cost a lookup, not a resolution of every folder above it (which made
 * a turn cost grow with the cube of the depth), and the checks of a file that is there stay.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readWorkspaceText } from "../../src/config/workspace_file.ts";

const DEPTH = 600;
/** A hang guard, far above what the walk takes (tens of milliseconds). */
const BOUND_MS = 3_000;

Deno.test("readWorkspaceText() walks a workspace 600 folders deep without resolving each folder again per file", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_deep_" }));
  try {
    const folders: string[] = [];
    let dir = root;
    for (let i = 0; i < DEPTH; i++) folders.push(dir = join(dir, "d"));
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(join(root, "secret.txt"), "sk-person-SECRET\n");
    Deno.symlinkSync(join(root, "secret.txt"), join(dir, "CLAUDE.md"));
    Deno.writeTextFileSync(join(dir, "AGENTS.md"), "deep rules\n");
    const warnings: string[] = [];
    const warn = (text: string) => warnings.push(text);
    const started = performance.now();
    const found = folders.flatMap((folder) =>
      ["AGENTS.md", "CLAUDE.md"].flatMap((name) =>
        readWorkspaceText(folder, join(folder, name), { what: "context file", warn }) ?? []
      )
    );
    const took = performance.now() - started;
    assert.ok(took < BOUND_MS, `the walk took ${Math.round(took)} ms`);
    assert.deepEqual(found, ["deep rules\n"]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /CLAUDE\.md.*leads out of the workspace/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
