import { deepEqual, equal, ok } from "node:assert/strict";
import {
  diffSummary,
  numberedDiff,
  patchLines,
  renderDiff,
  unifiedDiff,
} from "../../src/tui/diff_view.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const colour = themeFor(true);

Deno.test("unifiedDiff() writes a/ and b/ headers and the changed hunk", () => {
  const patch = unifiedDiff("src/a.ts", "one\ntwo\nthree\n", "one\nTWO\nthree\n");
  equal(
    patch,
    "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
  );
});

Deno.test("unifiedDiff() honours the context size and is empty for equal texts", () => {
  const before = "1\n2\n3\n4\n5\n";
  const patch = unifiedDiff("n.txt", before, "1\n2\nthree\n4\n5\n", 0);
  equal(patch, "--- a/n.txt\n+++ b/n.txt\n@@ -3,1 +3,1 @@\n-3\n+three\n");
  equal(unifiedDiff("n.txt", before, before), "");
});

Deno.test("renderDiff() colours additions, removals, hunks and headers", () => {
  const patch = unifiedDiff("a.ts", "x\ny\n", "x\nz\n");
  deepEqual(renderDiff(patch, 80, colour), [
    "\x1b[1m--- a/a.ts\x1b[22m",
    "\x1b[1m+++ b/a.ts\x1b[22m",
    "\x1b[36m@@ -1,2 +1,2 @@\x1b[39m",
    " x",
    "\x1b[31m-y\x1b[39m",
    "\x1b[32m+z\x1b[39m",
  ]);
});

Deno.test("renderDiff() reads removed lines that look like headers by the hunk counts", () => {
  const patch = unifiedDiff("a.md", "-- a\nkeep\n", "++ b\nkeep\n");
  const lines = renderDiff(patch, 80, colour);
  equal(lines[3], "\x1b[31m--- a\x1b[39m");
  equal(lines[4], "\x1b[32m+++ b\x1b[39m");
  deepEqual(diffSummary(patch), { added: 1, removed: 1 });
});

Deno.test("renderDiff() cuts lines to the width and turns tabs into spaces", () => {
  const patch = unifiedDiff("t.txt", "short\n", "\ta much longer line of text\n");
  const lines = renderDiff(patch, 12, plain);
  deepEqual(lines, ["--- a/t.txt", "+++ b/t.txt", "@@ -1,1 +1,…", "-short", "+  a much l…"]);
  for (const line of renderDiff(patch, 12, colour)) ok(visibleWidth(line) <= 12);
});

Deno.test("renderDiff() elides the middle of a long diff with a count", () => {
  const before = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n";
  const after = before.replaceAll("line", "LINE");
  const patch = unifiedDiff("big.txt", before, after);
  const all = renderDiff(patch, 80, plain, 1000);
  equal(all.length, 203);
  const lines = renderDiff(patch, 80, plain, 11);
  equal(lines.length, 11);
  deepEqual(lines.slice(0, 5), all.slice(0, 5));
  equal(lines[5], "… 193 more lines");
  deepEqual(lines.slice(6), all.slice(-5));
  equal(renderDiff(patch, 80, plain).length, 60);
  equal(renderDiff(patch, 80, colour, 11)[5], "\x1b[2m… 193 more lines\x1b[22m");
});

Deno.test("diffSummary() counts added and removed lines but not headers", () => {
  const patch = unifiedDiff("a.txt", "a\nb\nc\n", "a\nB\nC\nd\n");
  deepEqual(diffSummary(patch), { added: 3, removed: 2 });
  deepEqual(diffSummary(""), { added: 0, removed: 0 });
});

Deno.test("numberedDiff() shows line numbers instead of hunk headers, hunks apart", () => {
  const before = Array.from({ length: 120 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  const after = before.replace("line 5\n", "line five\n").replace("line 100\n", "");
  const lines = numberedDiff(unifiedDiff("n.txt", before, after, 1), 80, plain);
  deepEqual(lines, [
    "  4   line 4",
    "  5 - line 5",
    "  5 + line five",
    "  6   line 6",
    "    ⋮",
    " 99   line 99",
    "100 - line 100",
    "100   line 101",
  ]);
  ok(!lines.some((line) => line.includes("@@")));
});

Deno.test("unifiedDiff() past its edit bound replaces every line instead of searching on", () => {
  // Every other line changed over 6,000 lines: 6,000 line edits, past the bound of 4,000; the
  // minimal diff's cost grows with edits times lines (8,000 lines to 8,000 others took 13 s).
  const lines = Array.from({ length: 6_000 }, (_, i) => `line ${i}`);
  const before = lines.join("\n") + "\n";
  const after = lines.map((line, i) => i % 2 === 0 ? line : `${line} changed`).join("\n") + "\n";
  const patch = unifiedDiff("big.txt", before, after);
  const body = patch.split("\n").slice(3, -1);
  ok(patch.startsWith("--- a/big.txt\n+++ b/big.txt\n@@ -1,6000 +1,6000 @@\n"), patch.slice(0, 80));
  // One hunk that removes every old line and adds every new one: no context line.
  equal(body.filter((line) => line.startsWith(" ")).length, 0);
  equal(body.filter((line) => line.startsWith("-")).length, 6_000);
  equal(body.filter((line) => line.startsWith("+")).length, 6_000);
  // Below the bound the diff is minimal as before.
  const small = unifiedDiff("s.txt", "a\nb\nc\n", "a\nB\nc\n");
  ok(small.includes(" a\n-b\n+B\n c\n"), small);
});

Deno.test("patchLines() shows a change of line ending or trailing blanks alone, and leaves a CRLF file's endings out", () => {
  // Only the ending changed: the two lines would read the same without the mark.
  const ending = unifiedDiff("a.sh", "echo hi\nexit 0\n", "echo hi\r\nexit 0\n");
  const endingLines = patchLines(ending);
  ok(endingLines.includes("-echo hi"), endingLines.join("\n"));
  ok(endingLines.includes("+echo hi␍"), endingLines.join("\n"));
  // Only trailing blanks changed: each shown, a space as · and a tab as →.
  const blanks = patchLines(unifiedDiff("a.txt", "x = 1\n", "x = 1 \t\n"));
  ok(blanks.includes("+x = 1·→"), blanks.join("\n"));
  ok(blanks.includes("-x = 1"), blanks.join("\n"));
  // A CRLF file throughout: no mark on every line.
  const crlf = patchLines(unifiedDiff("w.txt", "one\r\ntwo\r\n", "one\r\nTWO\r\n"));
  ok(crlf.includes("-two") && crlf.includes("+TWO") && crlf.includes(" one"), crlf.join("\n"));
  ok(!crlf.some((line) => line.includes("␍")), crlf.join("\n"));
  // Context lines keep their blanks as they are; a long run is counted, not dotted.
  const context = patchLines(" keep  \n+" + "y" + " ".repeat(30) + "\n");
  deepEqual(context, [" keep  ", "+y⟨30 spaces⟩"]);
});
