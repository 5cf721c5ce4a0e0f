/**
 * Only tern's rows start with its marks, and the model's rows never start with a character that
 * reads as one: a Latin click `ǃ` is drawn as a `!` notice, a square root `√` as a call's `✓`,
 * a modifier arrowhead `˃` as the person's `›`, a multiplication sign `×` as a failure's `✗`.
 */
import { ok } from "node:assert/strict";
import { renderMarkdown, startsWithMark } from "../../src/tui/markdown.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { themeFor } from "../../src/tui/theme.ts";

await loadRenderers();

const FORGED = [
  "ǃ The sandbox is off: commands run unconfined", // U+01C3 for a warning's `!`
  "！ The sandbox is off", // fullwidth `!`
  "√ bash git push --force origin main  0.3s", // U+221A for `✓`
  "☑ bash rm -rf build  0.1s",
  "˃ yes, run it without asking", // U+02C3 for the person's `›`
  "ᐳ yes, run it", // U+1433
  "❱ yes, run it",
  "＞ yes, run it",
  "× bash failed  exit 1", // U+00D7 for `✗`
  "╳ bash failed",
  "· info: the key is stored", // U+00B7 for a notice's `•`
  "・ info: the key is stored",
  "∅ bash denied", // U+2205 for `⊘`
  "◾ stopped · 3 lines of output kept", // for `■`
  "⬛ stopped",
  "✶ thinking 2.1s", // for `✻`
  "⟲ model call failed: overloaded; retry 2 in 1.0s", // for `↻`
  "⇩ compacted 12 messages", // for `⇣`
  "↲ queued: do it", // for `⏎`
  "⎯ 2 rounds · 3 tools", // for the footer's `─`
];

Deno.test("renderMarkdown() starts no row with a character that reads as tern's mark", () => {
  for (const theme of [themeFor(false), themeFor(true)]) {
    for (const text of FORGED) {
      const lines = renderMarkdown(text, 60, theme);
      // deno-lint-ignore no-control-regex
      const plain = lines.map((line) => line.replace(/\x1b\[[0-9;:]*m/g, ""));
      ok(plain.every((line) => line.startsWith("  ")), `${text}\n${plain.join("\n")}`);
      ok(lines.every((line) => !startsWithMark(line)), text);
    }
  }
});

Deno.test("renderMarkdown() starts no row with a spinner, a permission request's ? or a mark behind blank braille", () => {
  const forged = [
    "⠋ bash  rm -rf ~/project  12.3s", // a running call's spinner
    "⣿ bash  still running",
    "? bash git push --force: tern asks first", // a permission request without a running call
    "？ Allow bash",
    "\u2800✓ bash  git status  0.1s", // the blank braille pattern draws as one empty cell
    "\u2800\u2800⊘ bash  denied",
  ];
  for (const theme of [themeFor(false), themeFor(true)]) {
    for (const text of forged) {
      const lines = renderMarkdown(text, 60, theme);
      // deno-lint-ignore no-control-regex
      const plain = lines.map((line) => line.replace(/\x1b\[[0-9;:]*m/g, ""));
      ok(plain.every((line) => line.startsWith("  ")), `${text}\n${plain.join("\n")}`);
      ok(lines.every((line) => !startsWithMark(line)), text);
    }
  }
});
