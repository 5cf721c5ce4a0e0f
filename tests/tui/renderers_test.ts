import { deepEqual, equal, ok } from "node:assert/strict";
import { diffSummary, unifiedDiff } from "../../src/tui/diff_view.ts";
import { renderMarkdown } from "../../src/tui/markdown.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth, widthEpoch } from "../../src/tui/width.ts";

const plain = themeFor(false);
const MARKDOWN = "# Title\n\nSome **bold** words that wrap, 日本語 too.";

// Before the renderers load: the stand-ins the first frame would use.
const before = {
  epoch: widthEpoch(),
  markdown: renderMarkdown(MARKDOWN, 16, plain),
  diff: unifiedDiff("a.txt", "one\ntwo\nthree\n", "one\n2\nthree"),
  added: unifiedDiff("new.txt", "", "x\n"),
};
await loadRenderers();

Deno.test("renderMarkdown() shows the text as it is, wrapped, until marked is loaded", () => {
  equal(before.epoch, 0);
  deepEqual(before.markdown, ["# Title", "", "Some **bold** ", "words that wrap,", "日本語 too."]);
  for (const line of before.markdown) ok(visibleWidth(line) <= 16);
  deepEqual(renderMarkdown(MARKDOWN, 16, plain), [
    "# Title",
    "",
    "Some bold words",
    "that wrap,",
    "日本語 too.",
  ]);
});

Deno.test("unifiedDiff() replaces every line until jsdiff is loaded, then diffs", () => {
  equal(
    before.diff,
    "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\n-two\n-three\n+one\n+2\n+three\n" +
      "\\ No newline at end of file\n",
  );
  deepEqual(diffSummary(before.diff), { added: 3, removed: 3 });
  equal(before.added, "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+x\n");
  const real = unifiedDiff("a.txt", "one\ntwo\nthree\n", "one\n2\nthree");
  ok(real.includes("@@ -1,3 +1,3 @@\n one\n-two\n-three\n+2\n+three\n"), real);
  deepEqual(diffSummary(real), { added: 2, removed: 2 });
});
