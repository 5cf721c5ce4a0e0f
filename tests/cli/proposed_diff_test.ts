import { equal, ok } from "node:assert/strict";
import { proposedDiff } from "../../src/cli/interactive/proposed_diff.ts";
import type { ReviewRequest } from "../../src/sandbox/review.ts";

function request(tool: string, args: unknown): ReviewRequest {
  return { tool, args, summary: "", reason: "", profile: ":workspace", rememberable: true };
}

Deno.test("proposedDiff() shows what an edit or a write would change, and nothing else", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  try {
    await Deno.writeTextFile(`${workspace}/a.ts`, "const a = 1;\nconst b = 2;\n");
    const edit = await proposedDiff(
      request("edit", { path: "a.ts", old_string: "const b = 2;", new_string: "const b = 3;" }),
      workspace,
    );
    ok(edit?.includes("-const b = 2;") && edit.includes("+const b = 3;"), edit);
    const created = await proposedDiff(
      request("write", { path: "new.txt", content: "hi\n" }),
      workspace,
    );
    ok(created?.includes("+hi"), created);
    // An edit whose old text is not in the file, another tool, a path outside: no diff.
    equal(
      await proposedDiff(
        request("edit", { path: "a.ts", old_string: "missing", new_string: "x" }),
        workspace,
      ),
      undefined,
    );
    equal(await proposedDiff(request("bash", { command: "ls" }), workspace), undefined);
    equal(
      await proposedDiff(request("write", { path: "../outside.txt", content: "x" }), workspace),
      undefined,
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("proposedDiff() shows a multi_edit's replacements applied in order, or nothing when one cannot apply", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  try {
    await Deno.writeTextFile(`${workspace}/a.ts`, "const a = 1;\nconst b = 2;\n");
    const edits = [
      { old_string: "const a = 1;", new_string: "const a = 10;" },
      // Applies to the text the first edit left.
      { old_string: "a = 10", new_string: "a = 11" },
    ];
    const diff = await proposedDiff(request("multi_edit", { path: "a.ts", edits }), workspace);
    ok(diff?.includes("-const a = 1;") && diff.includes("+const a = 11;"), diff);
    ok(!diff?.includes("+const a = 10;"), diff);
    const broken = [...edits, { old_string: "missing", new_string: "x" }];
    equal(
      await proposedDiff(request("multi_edit", { path: "a.ts", edits: broken }), workspace),
      undefined,
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
