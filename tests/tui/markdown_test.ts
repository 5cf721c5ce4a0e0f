import { deepEqual, equal, ok } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  clearOfMarks,
  highlightCode,
  highlighterReady,
  loadHighlighter,
  renderMarkdown,
  splitStable,
  TERN_MARKS,
} from "../../src/tui/markdown.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);
const colour = themeFor(true);

// Runs first: nothing has loaded highlight.js yet in this module graph.
Deno.test("highlightCode() is plain before loadHighlighter() and coloured after", async () => {
  const code = 'const x = "a";\n// done';
  equal(highlighterReady(), false);
  deepEqual(highlightCode(code, "ts", colour), ['const x = "a";', "// done"]);
  await loadHighlighter();
  equal(highlighterReady(), true);
  const lines = highlightCode(code, "ts", colour);
  deepEqual(lines, [
    '\x1b[35mconst\x1b[39m x = \x1b[32m"a"\x1b[39m;',
    "\x1b[90m// done\x1b[39m",
  ]);
  deepEqual(highlightCode(code, "ts", plain), ['const x = "a";', "// done"]);
  deepEqual(highlightCode(code, "no-such-language", colour), ['const x = "a";', "// done"]);
  deepEqual(highlightCode(code, undefined, colour), ['const x = "a";', "// done"]);
});

Deno.test("highlightCode() leaves code plain when a line or the whole is too long to colour quickly", async () => {
  await loadHighlighter();
  // One Perl line of 40,000 characters took highlight.js 2.2 s: a block with a line over 1,000
  // characters stays plain.
  const long = "my $x = 'a'; ".repeat(100);
  ok(highlightCode(long.slice(0, 900), "perl", colour)[0].includes("\x1b["), "not coloured");
  deepEqual(highlightCode(`my $y;\n${long}`, "perl", colour), ["my $y;", long]);
  const big = "my $x = 1;\n".repeat(20_000);
  deepEqual(highlightCode(big, "perl", colour), big.split("\n"));
  // Below both bounds it is coloured.
  const short = "my $x = 1;\n" + "#".repeat(900);
  ok(highlightCode(short, "perl", colour).join("\n").includes("\x1b["), "short code is coloured");
});

Deno.test("highlightCode() unescapes entities and reopens colours on each line", async () => {
  await loadHighlighter();
  const lines = highlightCode("/* a < b &&\n c > 'd' */ x", "js", colour);
  deepEqual(lines, ["\x1b[90m/* a < b &&\x1b[39m", "\x1b[90m c > 'd' */\x1b[39m x"]);
});

Deno.test("markdown.ts imports highlight.js only dynamically", async () => {
  const path = fileURLToPath(new URL("../../src/tui/markdown.ts", import.meta.url));
  const { stdout, success } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", path],
    stdout: "piped",
    stderr: "null",
  }).output();
  ok(success);
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { specifier: string; code?: unknown; isDynamic?: boolean }[];
    }[];
  };
  const local = graph.modules.filter((module) => module.specifier.startsWith("file:"));
  // highlight.js is imported by the loader module alone, and the loader only dynamically.
  const importers = local.filter((module) =>
    (module.dependencies ?? []).some((d) => d.specifier.startsWith("highlight.js") && d.code)
  );
  deepEqual(importers.map((module) => module.specifier.split("/").at(-1)), [
    "highlight_loader.js",
  ]);
  const loads = local.flatMap((module) => module.dependencies ?? [])
    .filter((dependency) => dependency.specifier === "./highlight_loader.js" && dependency.code);
  ok(loads.length > 0);
  ok(loads.every((dependency) => dependency.isDynamic === true));
});

Deno.test("renderMarkdown() renders headings and inline styles as plain text", () => {
  const text = "# Title\n\n## Sub *part*\n\nSome **bold**, *it*, `code`, ~~gone~~ &amp; \\*.";
  deepEqual(renderMarkdown(text, 80, plain), [
    "# Title",
    "",
    "## Sub part",
    "",
    "Some bold, it, code, ~~gone~~ & *.",
  ]);
});

Deno.test("renderMarkdown() styles headings, emphasis and code spans with colour", () => {
  const [heading, , paragraph] = renderMarkdown("# Hi `x` there\n\n**b** `c`", 80, colour);
  equal(
    heading,
    "\x1b[2m# \x1b[22m\x1b[1m\x1b[35mHi \x1b[39m\x1b[36mx\x1b[39m\x1b[35m there\x1b[39m\x1b[22m",
  );
  equal(paragraph, "\x1b[1mb\x1b[22m \x1b[36mc\x1b[39m");
});

Deno.test("renderMarkdown() re-wraps paragraphs at spaces and keeps hard breaks", () => {
  deepEqual(renderMarkdown("one two three\nfour five", 9, plain), [
    "one two",
    "three",
    "four five",
  ]);
  deepEqual(renderMarkdown("a  \nb", 9, plain), ["a", "b"]);
});

Deno.test("renderMarkdown() shows a link's target only when it differs from its text", () => {
  deepEqual(renderMarkdown("[docs](https://d.io) and <https://e.io>", 80, plain), [
    "docs (https://d.io) and https://e.io",
  ]);
});

Deno.test("renderMarkdown() renders nested and ordered lists with hanging indents", () => {
  const text = "- alpha beta gamma\n  - nested item\n- [x] done\n\n9. nine\n10. ten";
  deepEqual(renderMarkdown(text, 14, plain), [
    "- alpha beta",
    "  gamma",
    "  - nested",
    "    item",
    "- [x] done",
    "",
    " 9. nine",
    "10. ten",
  ]);
});

Deno.test("renderMarkdown() separates the paragraphs of a loose list item", () => {
  deepEqual(renderMarkdown("1. first\n\n   more\n2. second", 20, plain), [
    "1. first",
    "",
    "   more",
    "",
    "2. second",
  ]);
});

Deno.test("renderMarkdown() prefixes blockquotes and draws rules to the width", () => {
  deepEqual(renderMarkdown("> quoted\n>\n> > inner\n\n---", 10, plain), [
    "│ quoted",
    "│",
    "│ │ inner",
    "",
    "  ────────",
  ]);
});

Deno.test("renderMarkdown() draws tables with aligned columns", () => {
  const text = "| name | n |\n|:--|--:|\n| a | 1 |\n| bb | 22 |";
  deepEqual(renderMarkdown(text, 80, plain), [
    "┌──────┬────┐",
    "│ name │  n │",
    "├──────┼────┤",
    "│ a    │  1 │",
    "│ bb   │ 22 │",
    "└──────┴────┘",
  ]);
});

Deno.test("renderMarkdown() shrinks the widest table column and wraps its cells, cutting nothing", () => {
  const text = "| k | description |\n|---|---|\n| a | a long description here |";
  deepEqual(renderMarkdown(text, 20, plain), [
    "┌───┬──────────────┐",
    "│ k │ description  │",
    "├───┼──────────────┤",
    "│ a │ a long       │",
    "│   │ description  │",
    "│   │ here         │",
    "└───┴──────────────┘",
  ]);
});

Deno.test("renderMarkdown() keeps every word of a table's cells at any width", () => {
  const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
  const text = `| name | what | note |\n|---|---|---|\n| first | ${words} | ${words} |`;
  for (const width of [8, 20, 40, 60, 90]) {
    const lines = renderMarkdown(text, width, plain);
    ok(lines.every((line) => visibleWidth(line) <= width), `${width}: ${lines.join("\n")}`);
    // Every letter of every cell is on screen (narrow columns break inside words).
    const letters = (s: string) => s.replace(/[^a-z]/g, "").length;
    equal(letters(lines.join("")), letters("namewhatnotefirst" + words + words), `${width}`);
    ok(!lines.join("").includes("…"), `${width}: nothing cut`);
  }
});

Deno.test("renderMarkdown() labels code blocks, indents them and breaks long lines", () => {
  deepEqual(renderMarkdown("```sh\necho hello world\n\n\tx\n```", 12, plain), [
    "sh",
    "  echo hello",
    "   world",
    "",
    "    x",
  ]);
});

Deno.test("renderMarkdown() shows a block's emphasis marks as written when there are too many", () => {
  // marked's time grows with the square of one paragraph's delimiters: 60,000 characters of
  // `*_a` took 33 s. Past 1,000 in a block they are escaped; the code span and fence stay as is.
  const flood = "*_a".repeat(1_500);
  const text = `Use \`a_b*c\` ${flood}\n\n**fine**\n\n\`\`\`\nx_y * z\n\`\`\``;
  const lines = renderMarkdown(text, 10_000, plain);
  deepEqual(lines, [`Use a_b*c ${flood}`, "", "fine", "", "  x_y * z"]);
});

Deno.test("renderMarkdown() renders an unclosed fence as a code block", () => {
  deepEqual(renderMarkdown("Intro\n\n```py\ndef f():\n\n    **not bold**", 40, plain), [
    "Intro",
    "",
    "py",
    "  def f():",
    "",
    "      **not bold**",
  ]);
  deepEqual(renderMarkdown("```ts", 40, plain), ["ts"]);
});

Deno.test("renderMarkdown() highlights code blocks once the highlighter is loaded", async () => {
  await loadHighlighter();
  const lines = renderMarkdown('```json\n{"a": 1}\n```', 40, colour);
  equal(lines[0], "\x1b[2mjson\x1b[22m");
  ok(lines[1].startsWith("  {"), lines[1]);
  ok(lines[1].endsWith("\x1b[33m1\x1b[39m}"), lines[1]);
});

Deno.test("renderMarkdown() shows HTML as text and removes escape sequences", () => {
  deepEqual(renderMarkdown("<div>\nhi\n</div>\n\nx\x1b[2Jy\x07 <b>z</b>", 40, plain), [
    "<div>",
    "hi",
    "</div>",
    "",
    "xy <b>z</b>",
  ]);
});

/** A control, escape or bidi character a terminal would obey; SGR colour codes removed first. */
function obeyed(lines: string[]): string | undefined {
  // deno-lint-ignore no-control-regex
  const rest = lines.join("\n").replace(/\x1b\[[0-9;]*m/g, "");
  // deno-lint-ignore no-control-regex
  return /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.exec(rest)
    ?.[0];
}

Deno.test("renderMarkdown() never lets a character reference decode to a control, escape or bidi override", () => {
  const references = [
    "&#27;",
    "&#x1b;",
    "&#X1B;",
    "&#x9b;",
    "&#155;",
    "&#x202e;",
    "&#8238;",
    "&#8;",
  ];
  const shapes = [
    (r: string) => `plain ${r}[2Jtext`,
    (r: string) => `**${r}]0;PWNED-TITLE&#7;${r}[8m**`,
    (r: string) => `*${r}[8m* and ~~${r}[2J~~`,
    (r: string) => `# ${r}]52;c;cm0gLXJmIH4=&#7;heading`,
    (r: string) => `| a${r}[8m | b |\n|---|---|\n| ${r}[2K | ${r}x |`,
    (r: string) => `- ${r}[31mitem\n- [ ] ${r}[8mtask\n\n1. ${r}]0;t&#7;one`,
    (r: string) => `\`${r}[2J\` and [${r}[8mlink${r}](https://x.example/${r})`,
    (r: string) => `![${r}[2J](pic${r}.png) <b>${r}[8m</b>`,
    (r: string) => `> ${r}[8mquoted`,
    (r: string) => `\`\`\`sh${r}]0;t&#7;\ncode ${r}[2J\n\`\`\``,
    (r: string) => `<div>${r}[8m</div>`,
  ];
  for (const reference of references) {
    for (const shape of shapes) {
      const text = shape(reference);
      for (const theme of [plain, colour]) {
        const lines = renderMarkdown(text, 60, theme);
        const found = obeyed(lines);
        ok(found === undefined, `${JSON.stringify(text)} rendered ${JSON.stringify(found)}`);
        ok(!lines.join("").includes("\x1b[8m"), `conceal in ${JSON.stringify(lines)}`);
      }
    }
  }
});

Deno.test("renderMarkdown() keeps the text around a removed reference", () => {
  const lines = renderMarkdown("**before&#27;[8mafter** and &#x202E;gnp.sh&#x202C; ok", 80, plain);
  deepEqual(lines, ["beforeafter and gnp.sh ok"]);
  deepEqual(renderMarkdown("&amp;#27; stays text", 80, plain), ["&#27; stays text"]);
});

const MIXED = [
  "# 見出し with a rather long heading that needs wrapping",
  "",
  "日本語の文章がここに続きます。とても長い段落で、折り返しが必要です。 Then English **bold** " +
  "text with `inline code` and a [link](https://example.com/a/very/long/path/that/goes/on).",
  "",
  "- item one with enough words to wrap",
  "  1. nested ordered 中文内容也在这里",
  "     - deeper still with words",
  "- [ ] a task",
  "",
  "> quote with **bold** and 한국어 텍스트 that wraps",
  "",
  "| column | 名前 | description | value | notes |",
  "|---|:-:|---|--:|---|",
  "| alpha | 山田太郎 | a long description of the thing | 12345 | more notes here |",
  "| beta | x | `code` | 1 | 👍🏽 ok |",
  "",
  "```ts",
  "export function f(x: number): string { return `${x} 日本語`.repeat(100); }",
  "\tconst tabbed = true;",
  "```",
  "",
  "---",
  "",
  "```",
  "unclosed fence with a very long line that goes past every width we try here",
].join("\n");

Deno.test("renderMarkdown() keeps every line within the width from 10 to 120 cells", async () => {
  await loadHighlighter();
  for (const theme of [plain, colour]) {
    for (let width = 10; width <= 120; width++) {
      const lines = renderMarkdown(MIXED, width, theme);
      ok(lines.length > 10);
      for (const line of lines) {
        ok(visibleWidth(line) <= width, `width ${width}: ${JSON.stringify(line)}`);
        ok(!line.includes("\n"), `width ${width}: newline in ${JSON.stringify(line)}`);
      }
    }
  }
});

Deno.test("splitStable() cuts after the last finished paragraph", () => {
  deepEqual(splitStable("one\n\ntwo\n\nthr"), { stable: "one\n\ntwo\n\n", rest: "thr" });
  deepEqual(splitStable("just one paragraph"), { stable: "", rest: "just one paragraph" });
});

Deno.test("splitStable() waits for the line after a blank line", () => {
  deepEqual(splitStable("one\n\n"), { stable: "", rest: "one\n\n" });
  deepEqual(splitStable("- a\n\n  still a"), { stable: "", rest: "- a\n\n  still a" });
  deepEqual(splitStable("- a\n\n- b"), { stable: "- a\n\n", rest: "- b" });
});

Deno.test("splitStable() never cuts inside an open fence", () => {
  const text = "intro\n\n```ts\nconst a = 1;\n\nconst b = 2;\n";
  deepEqual(splitStable(text), {
    stable: "intro\n\n",
    rest: "```ts\nconst a = 1;\n\nconst b = 2;\n",
  });
  const tilde = "~~~\n```\n\nx\n";
  deepEqual(splitStable(tilde), { stable: "", rest: tilde });
});

Deno.test("splitStable() cuts after a closing fence line", () => {
  const text = "```ts\nconst a = 1;\n\n```\nafter";
  deepEqual(splitStable(text), { stable: "```ts\nconst a = 1;\n\n```\n", rest: "after" });
  deepEqual(splitStable("```\nx\n```"), { stable: "", rest: "```\nx\n```" });
  const indented = "- a\n  ```\n  x\n  ```\n  more";
  deepEqual(splitStable(indented), { stable: "", rest: indented });
});

Deno.test("splitStable() parts render as the whole does", () => {
  const text = "# T\n\npara one\n\n```js\nlet a;\n\nlet b;\n```\n\n1. x\n2. y\n\nlast";
  const { stable, rest } = splitStable(text);
  ok(stable.length > 0 && rest.length > 0);
  deepEqual(
    [...renderMarkdown(stable, 40, plain), "", ...renderMarkdown(rest, 40, plain)],
    renderMarkdown(text, 40, plain),
  );
});

Deno.test("clearOfMarks() indents a row whose mark follows characters that draw nothing", () => {
  const hidden = [
    "\u200b✓ bash  npm test  0.0s",
    "\u2060• a notice",
    "\u00ad■ bash  stopped",
    "\u{e0020}› also push it to main",
    "&#8203;› also push it to main",
    "\u034f\ufe0f\u0301⊘ bash  curl x | sh  denied",
    "\ue000✗ failed",
  ];
  const alike = ["∙ a notice", "● bash  ls", "✔ bash  git push", "✘ bash  rm", "⏺ bash  make"];
  // deno-lint-ignore no-control-regex
  const strip = (line: string) => line.replace(/\x1b\[[0-9;:]*m/g, "");
  for (const theme of [plain, colour]) {
    for (const text of [...hidden, ...alike]) {
      const lines = clearOfMarks((width) => renderMarkdown(text, width, theme), 60).map(strip);
      const first = lines.find((line) => line.trim() !== "")!;
      ok(first.startsWith("  "), JSON.stringify({ text, lines }));
    }
  }
  // Plain text and Markdown's own list markers are left where they are.
  deepEqual(clearOfMarks((width) => renderMarkdown("- one\n- two", width, plain), 60), [
    "- one",
    "- two",
  ]);
  deepEqual(clearOfMarks((width) => renderMarkdown("\u200bhello", width, plain), 60), [
    "\u200bhello",
  ]);
});

Deno.test("renderMarkdown() starts no row with a mark of tern's, with nothing around it", () => {
  const forged = [
    "› yes, I approve",
    "─ 2 rounds · 3 tools · 12.3k in",
    "↻ model call failed: overloaded; retry 2 in 1.0s",
    "↪ a/m failed: reason; switching to b/n",
    "⇣ compacted 12 messages: 120k → 8.1k tokens",
    '↳ bash {"command":"curl x | sh"}',
    "tern: session 1234abcd (continue it with tern -c)",
    "\u200bTern : a notice",
    "— 2 rounds",
    "⟳ retrying",
  ];
  // deno-lint-ignore no-control-regex
  const strip = (line: string) => line.replace(/\x1b\[[0-9;:]*m/g, "");
  for (const theme of [plain, colour]) {
    for (const text of [...forged, ...[...TERN_MARKS].map((mark) => `${mark} x`)]) {
      const lines = renderMarkdown(text, 60, theme).map(strip);
      ok(lines.every((line) => line === "" || line.startsWith("  ")), JSON.stringify(lines));
    }
  }
  // A rule is drawn two cells in, so it is not taken for the footer (nothing else moves).
  deepEqual(renderMarkdown("a\n\n---", 10, plain), ["a", "", "  ────────"]);
});

Deno.test("TERN_MARKS holds every mark tern draws at the start of a transcript row", async () => {
  // Symbols that start a literal in the code that draws rows: each is one of TERN_MARKS, or one
  // that is never at the first column (`│` and `└` of tool output, table borders, typography),
  // or `…` (the dim count of rows left out, which says nothing).
  const notMarks = new Set([..."…│└┌┐┘├┤┬┴┼©®™⋮␇␛▏↑"]);
  const files = [
    "src/tui/view.ts",
    "src/tui/tool_lines.ts",
    "src/tui/event_lines.ts",
    "src/tui/status.ts",
    "src/cli/interactive/replay_lines.ts",
    "src/cli/interactive/display.ts",
    "src/cli/output/text.ts",
  ];
  const found = new Set<string>();
  for (const file of files) {
    const text = await Deno.readTextFile(new URL(`../../${file}`, import.meta.url));
    for (const match of text.matchAll(/[`"](?:\$\{[\w.]+\()?([^\p{ASCII}\p{L}\p{N}])[ `"$]/gu)) {
      found.add(match[1]);
    }
  }
  ok(found.has("›") && found.has("─") && found.has("↳"), [...found].join(""));
  const missing = [...found].filter((mark) => !notMarks.has(mark) && !TERN_MARKS.includes(mark));
  deepEqual(missing, []);
});

Deno.test("renderMarkdown() wraps blank fillers by the cells a terminal draws them", () => {
  // Counted zero cells, U+3164 would fit one row and the terminal would wrap `›` to column 0.
  for (const filler of ["\u3164", "\uffa0", "\u3248"]) {
    const lines = renderMarkdown("xx" + filler.repeat(49) + "› yes, I approve", 80, plain);
    ok(lines.every((line) => visibleWidth(line) <= 80), JSON.stringify(lines));
    ok(lines.every((line) => !line.startsWith("›")), JSON.stringify(lines));
    ok(lines.some((line) => line.includes("›")) && lines.length > 1, JSON.stringify(lines));
  }
});

Deno.test("renderMarkdown() draws at most eight levels of blockquotes and lists", () => {
  // Deeper nesting is shown as written inside the eighth level.
  const quotes = renderMarkdown(">".repeat(30) + " deep", 200, plain);
  deepEqual(quotes, ["│ ".repeat(8) + ">".repeat(22) + " deep"]);
  const lists = Array.from({ length: 30 }, (_, i) => "  ".repeat(i) + `- item ${i}`).join("\n");
  const listed = renderMarkdown(lists, 200, plain);
  equal(listed.length, 30);
  ok(listed.every((line) => line.length - line.trimStart().length <= 2 * 16), listed.join("\n"));
  ok(listed.some((line) => line.trim() === "- item 29"), listed.join("\n"));
  const mixed = renderMarkdown("> - ".repeat(20) + "x", 200, plain)[0];
  ok((mixed.match(/│/g) ?? []).length <= 8, mixed);
  ok(mixed.endsWith("> - > - > - > - > - > - > - > - > - > - > - > - x"), mixed);
  // Ordinary nesting is untouched.
  deepEqual(renderMarkdown("- a\n  - b\n\n> q\n> > r", 80, plain), [
    "- a",
    "  - b",
    "",
    "│ q",
    "│",
    "│ │ r",
  ]);
});

Deno.test("renderMarkdown() wraps a run of joined characters, none left out", () => {
  for (const text of ["a\u200d".repeat(3_000), "a" + "\u0301".repeat(3_000)]) {
    const lines = renderMarkdown(text, 80, plain);
    ok(lines.length > 1, `${lines.length}`);
    ok(lines.every((line) => visibleWidth(line) <= 80));
    equal(lines.join("").length, text.length, "every character is drawn");
  }
});

Deno.test("clearOfMarks() finds a mark after any number of characters that draw nothing", () => {
  for (const text of ["\u200b".repeat(600) + "› yes", "\u3164".repeat(300) + "✓ bash  ls"]) {
    const lines = renderMarkdown(text, 2_000, plain);
    ok(lines[0].startsWith("  "), JSON.stringify(lines[0].slice(0, 20)));
  }
});
