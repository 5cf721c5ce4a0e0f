import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  MAX_DIFF_AFTER,
  proposedDiff as proposed,
} from "../../src/cli/interactive/proposed_diff.ts";
import { modelReadGuard } from "../../src/harness/read_guard.ts";
import type { ReviewRequest } from "../../src/sandbox/review.ts";

function request(tool: string, args: unknown): ReviewRequest {
  return { tool, args, summary: "", reason: "", profile: ":workspace", rememberable: true };
}

/** The diff shown for `request` with nothing refused; undefined when none (or withheld). */
function proposedDiff(request: ReviewRequest, workspace: string): string | undefined {
  const shown = proposed(request, workspace, { refuse: () => undefined });
  return shown !== undefined && "diff" in shown ? shown.diff : undefined;
}

Deno.test("proposedDiff() shows what an edit or a write would change, and nothing else", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  try {
    await Deno.writeTextFile(`${workspace}/a.ts`, "const a = 1;\nconst b = 2;\n");
    const edit = proposedDiff(
      request("edit", { path: "a.ts", old_string: "const b = 2;", new_string: "const b = 3;" }),
      workspace,
    );
    ok(edit?.includes("-const b = 2;") && edit.includes("+const b = 3;"), edit);
    const created = proposedDiff(
      request("write", { path: "new.txt", content: "hi\n" }),
      workspace,
    );
    ok(created?.includes("+hi"), created);
    // An edit whose old text is not in the file, another tool, a path outside: no diff.
    equal(
      proposedDiff(
        request("edit", { path: "a.ts", old_string: "missing", new_string: "x" }),
        workspace,
      ),
      undefined,
    );
    equal(proposedDiff(request("bash", { command: "ls" }), workspace), undefined);
    equal(
      proposedDiff(request("write", { path: "../outside.txt", content: "x" }), workspace),
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
    const diff = proposedDiff(request("multi_edit", { path: "a.ts", edits }), workspace);
    ok(diff?.includes("-const a = 1;") && diff.includes("+const a = 11;"), diff);
    ok(!diff?.includes("+const a = 10;"), diff);
    const broken = [...edits, { old_string: "missing", new_string: "x" }];
    equal(
      proposedDiff(request("multi_edit", { path: "a.ts", edits: broken }), workspace),
      undefined,
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("proposedDiff() shows no text of a file a link leads to outside the workspace, and says why", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  const workspace = join(root, "ws");
  try {
    await Deno.mkdir(join(root, ".ssh"));
    await Deno.writeTextFile(join(root, ".ssh", "id_rsa"), "PRIVATE-KEY-D-5e2a91\n");
    await Deno.mkdir(workspace);
    await Deno.symlink(join(root, ".ssh", "id_rsa"), join(workspace, "k"));
    const refuse = () => undefined;
    for (
      const args of [
        { path: "k", content: "x\n" },
        { path: "k", old_string: "PRIVATE", new_string: "x" },
      ]
    ) {
      const shown = proposed(request("write", args), workspace, { refuse });
      ok(shown !== undefined && "withheld" in shown, JSON.stringify(shown));
      ok(!JSON.stringify(shown).includes("PRIVATE-KEY-D-5e2a91"), JSON.stringify(shown));
      match(shown.withheld, /leads out of the workspace/);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("proposedDiff() shows no text of a file the person's deny rules hide, by name or as a link's target", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  const workspace = join(home, "ws");
  try {
    await Deno.mkdir(join(workspace, "config"), { recursive: true });
    await Deno.writeTextFile(join(workspace, "config", "prod.env"), "PROD-SECRET-D-0c71b3\n");
    await Deno.writeTextFile(join(workspace, "app.ts"), "const a = 1;\n");
    await Deno.symlink("config/prod.env", join(workspace, ".env"));
    const refuse = await modelReadGuard({
      workspace,
      ternHome: join(home, ".tern"),
      home,
      rules: [{ action: "deny", path: "**/.env" }],
    });
    for (const path of [".env", "config/prod.env"]) {
      const shown = proposed(request("write", { path, content: "x\n" }), workspace, { refuse });
      ok(shown !== undefined && "withheld" in shown, JSON.stringify(shown));
      ok(!JSON.stringify(shown).includes("PROD-SECRET-D-0c71b3"), JSON.stringify(shown));
      match(shown.withheld, /deny rules/);
    }
    // The project's own files still show their diff.
    const edit = proposed(
      request("edit", { path: "app.ts", old_string: "a = 1", new_string: "a = 2" }),
      workspace,
      { refuse },
    );
    ok(edit !== undefined && "diff" in edit && edit.diff.includes("+const a = 2;"), String(edit));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("proposedDiff() says a change is too large for a diff before making its text", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  try {
    // 100,000 × 100,000 characters: 10 GB had the text been made.
    await Deno.writeTextFile(`${workspace}/big.txt`, "a".repeat(100_000));
    const huge = { path: "big.txt", old_string: "a", new_string: "b".repeat(100_000) };
    const all = { ...huge, replace_all: true };
    // multi_edit's edits replace one occurrence each: five that each add 500,000 characters.
    const grow = Array.from(
      { length: 5 },
      () => ({ old_string: "a", new_string: "b".repeat(500_000) }),
    );
    for (
      const args of [all, {
        path: "big.txt",
        edits: [{ old_string: "aa", new_string: "a" }, ...grow],
      }]
    ) {
      const shown = proposed(request("edit", args), workspace, { refuse: () => undefined });
      ok(shown !== undefined && "withheld" in shown, JSON.stringify(shown)?.slice(0, 200));
      match(
        shown.withheld,
        /^the file would be [\d,]+ characters after this call, more than the 2,000,000 a diff is shown for$/,
      );
    }
    const written = proposed(
      request("write", { path: "new.txt", content: "x".repeat(MAX_DIFF_AFTER + 1) }),
      workspace,
      { refuse: () => undefined },
    );
    ok(written !== undefined && "withheld" in written);
    // Up to the limit the diff is shown.
    const small = proposedDiff(
      request("edit", { path: "big.txt", old_string: "a", new_string: "bb", replace_all: true }),
      workspace,
    );
    ok(small?.includes("+bbbb"), small?.slice(0, 200));
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("proposedDiff() does only bounded work for a call the tool has not checked yet", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-diff-" }));
  try {
    await Deno.writeTextFile(`${workspace}/big.txt`, "a".repeat(1_000_000));
    const shown = (args: unknown) =>
      proposed(request("multi_edit", args), workspace, {
        refuse: () => undefined,
      });
    // Shapes multi_edit refuses (replace_all in an edit, more than 100 edits) show nothing.
    const flip = [
      { old_string: "a", new_string: "b", replace_all: true },
      { old_string: "b", new_string: "a", replace_all: true },
    ];
    equal(shown({ path: "big.txt", edits: flip }), undefined);
    const many = Array.from({ length: 101 }, () => ({ old_string: "a", new_string: "b" }));
    equal(shown({ path: "big.txt", edits: many }), undefined);
    // 100 edits of a 1 MB file: past the work bound, withheld with a reason.
    const hundred = many.slice(0, 100);
    const withheld = shown({ path: "big.txt", edits: hundred });
    ok(withheld !== undefined && "withheld" in withheld, JSON.stringify(withheld)?.slice(0, 200));
    match(withheld.withheld, /100 replacements are too much work to show/);
    // The same edits of a small file are shown.
    await Deno.writeTextFile(`${workspace}/small.txt`, "a".repeat(200));
    const small = proposed(
      request("multi_edit", { path: "small.txt", edits: hundred }),
      workspace,
      {
        refuse: () => undefined,
      },
    );
    ok(small !== undefined && "diff" in small && small.diff.includes("+" + "b".repeat(100)));
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
