import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { Editor, type EditorAction } from "../../src/tui/editor.ts";
import { History } from "../../src/tui/history.ts";
import { key, type KeyEvent, textKey } from "../../src/tui/key_event.ts";
import { completePath } from "../../src/tui/mentions.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { exactWidth, loadWidth, visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

const plain = themeFor(false);

/** Feeds every event and returns the last action. */
function press(editor: Editor, ...events: KeyEvent[]): EditorAction {
  let action: EditorAction = { type: "ignored" };
  for (const event of events) action = editor.handle(event);
  return action;
}

function type(editor: Editor, text: string): void {
  press(editor, textKey(text));
}

Deno.test("Editor.handle() submits the text on Enter and clears the editor", () => {
  const editor = new Editor();
  type(editor, "hello");
  deepEqual(press(editor, key("enter")), { type: "submit", text: "hello" });
  equal(editor.text, "");
  ok(editor.isEmpty);
});

Deno.test("Editor.handle() ignores Enter on blank text and keys it does not use", () => {
  const editor = new Editor();
  deepEqual(press(editor, key("enter")), { type: "ignored" });
  type(editor, "  ");
  deepEqual(press(editor, key("enter")), { type: "ignored" });
  deepEqual(press(editor, key("c", { ctrl: true })), { type: "ignored" });
  deepEqual(press(editor, key("escape")), { type: "ignored" });
  deepEqual(press(editor, { kind: "report", sequence: "\x1b[?1u" }), { type: "ignored" });
});

Deno.test("Editor.handle() inserts a newline on Shift+Enter, Alt+Enter and Ctrl+J", () => {
  const editor = new Editor();
  type(editor, "a");
  press(editor, key("enter", { shift: true }));
  type(editor, "b");
  press(editor, key("enter", { alt: true }));
  type(editor, "c");
  press(editor, key("j", { ctrl: true }));
  type(editor, "d");
  equal(editor.text, "a\nb\nc\nd");
  deepEqual(press(editor, key("enter")), { type: "submit", text: "a\nb\nc\nd" });
});

Deno.test("Editor.handle() turns a trailing backslash and Enter into a newline", () => {
  const editor = new Editor();
  type(editor, "first \\");
  deepEqual(press(editor, key("enter")), { type: "changed" });
  equal(editor.text, "first \n");
  deepEqual(editor.cursor, { row: 1, col: 0 });
  deepEqual(editor.render(40, plain).lines, ["› first ", "  "]);
  type(editor, "second");
  deepEqual(press(editor, key("enter")), { type: "submit", text: "first \nsecond" });
});

Deno.test("Editor.handle() submits when the backslash is not right before the cursor", () => {
  const editor = new Editor();
  type(editor, "a\\b");
  deepEqual(press(editor, key("enter")), { type: "submit", text: "a\\b" });
});

Deno.test("Editor.handle() moves and deletes by grapheme, wide and surrogate pairs included", () => {
  const editor = new Editor();
  type(editor, "a日👍🏽b");
  press(editor, key("left"), key("left"));
  deepEqual(editor.cursor, { row: 0, col: 2 });
  press(editor, key("backspace"));
  equal(editor.text, "a👍🏽b");
  press(editor, key("delete"));
  equal(editor.text, "ab");
  press(editor, key("home"));
  type(editor, ">");
  press(editor, key("e", { ctrl: true }));
  type(editor, "<");
  equal(editor.text, ">ab<");
});

Deno.test("Editor.handle() joins lines with Backspace at a line start and Delete at an end", () => {
  const editor = new Editor();
  editor.text = "one\ntwo";
  press(editor, key("a", { ctrl: true }), key("backspace"));
  equal(editor.text, "onetwo");
  deepEqual(editor.cursor, { row: 0, col: 3 });
  press(editor, key("enter", { shift: true }), key("left"), key("delete"));
  equal(editor.text, "onetwo");
});

Deno.test("Editor.handle() kills with Ctrl+U, Ctrl+K, Ctrl+W and Alt+Backspace", () => {
  const editor = new Editor();
  type(editor, "alpha beta.gamma delta");
  press(editor, key("w", { ctrl: true }));
  equal(editor.text, "alpha beta.gamma ");
  press(editor, key("backspace", { alt: true }));
  equal(editor.text, "alpha beta.");
  press(editor, key("left", { ctrl: true }), key("left", { ctrl: true }));
  deepEqual(editor.cursor, { row: 0, col: 6 });
  press(editor, key("k", { ctrl: true }));
  equal(editor.text, "alpha ");
  press(editor, key("left", { alt: true }), key("right", { alt: true }));
  deepEqual(editor.cursor, { row: 0, col: 5 });
  press(editor, key("u", { ctrl: true }));
  equal(editor.text, " ");
});

Deno.test("Editor.handle() moves up and down between lines keeping the column", () => {
  const editor = new Editor();
  editor.text = "long first line\nab\nlong third line";
  press(editor, key("left"), key("left"), key("up"));
  deepEqual(editor.cursor, { row: 1, col: 2 });
  press(editor, key("up"));
  deepEqual(editor.cursor, { row: 0, col: 13 });
  press(editor, key("down"), key("down"));
  deepEqual(editor.cursor, { row: 2, col: 13 });
});

Deno.test("Editor.handle() walks history on the first and last line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const history = await History.open(join(dir, "history.jsonl"));
    await history.add("older");
    await history.add("multi\nline");
    const editor = new Editor({ history });
    type(editor, "draft");
    press(editor, key("up"));
    equal(editor.text, "multi\nline");
    deepEqual(editor.cursor, { row: 0, col: 5 });
    press(editor, key("up"));
    equal(editor.text, "older");
    deepEqual(press(editor, key("up")), { type: "ignored" });
    press(editor, key("down"));
    equal(editor.text, "multi\nline");
    deepEqual(editor.cursor, { row: 1, col: 4 });
    press(editor, key("down"));
    equal(editor.text, "draft");
    deepEqual(press(editor, key("down")), { type: "ignored" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Editor.handle() inserts a small paste as is and a large one as a marker", () => {
  const editor = new Editor();
  press(editor, { kind: "paste", text: "one\ntwo" });
  equal(editor.text, "one\ntwo");
  editor.clear();
  const big = Array.from({ length: 42 }, (_, i) => `line ${i}`).join("\n");
  type(editor, "see ");
  press(editor, { kind: "paste", text: big });
  type(editor, " and ");
  press(editor, { kind: "paste", text: "x".repeat(600) });
  equal(editor.text, "see [paste #1 +42 lines] and [paste #2 600 chars]");
  deepEqual(press(editor, key("enter")), {
    type: "submit",
    text: `see ${big} and ${"x".repeat(600)}`,
  });
});

Deno.test("Editor.handle() deletes and steps over a paste marker as one unit", () => {
  const editor = new Editor();
  press(editor, { kind: "paste", text: "a\nb\nc\nd\ne\nf" });
  type(editor, "!");
  press(editor, key("left"), key("left"));
  deepEqual(editor.cursor, { row: 0, col: 0 });
  press(editor, key("right"));
  equal(editor.cursor.col, "[paste #1 +6 lines]".length);
  press(editor, key("backspace"));
  equal(editor.text, "!");
});

Deno.test("Editor.handle() completes /he to /help with Tab", () => {
  const commands = () => [
    { name: "help", description: "Show help" },
    { name: "model", description: "Pick a model" },
  ];
  const editor = new Editor({ commands });
  type(editor, "/he");
  deepEqual(press(editor, key("tab")), { type: "changed" });
  equal(editor.text, "/help ");
});

Deno.test("Editor.handle() lists several commands, cycles with Tab and accepts with Enter", () => {
  const commands = () => [
    { name: "/memory", description: "Show memory" },
    { name: "/mcp", description: "MCP servers" },
    { name: "/mode", description: "Switch mode" },
  ];
  const editor = new Editor({ commands });
  type(editor, "/m");
  press(editor, key("tab"));
  equal(editor.text, "/m");
  deepEqual(editor.completions?.items.map((item) => item.value), ["/memory", "/mcp", "/mode"]);
  const frame = editor.render(40, plain);
  equal(frame.lines.length, 5);
  ok(frame.lines[1].startsWith("› /memory"), frame.lines[1]);
  equal(frame.lines[4], "  3 commands");
  press(editor, key("tab"), key("tab"), key("tab", { shift: true }));
  equal(editor.completions?.selected, 1);
  ok(editor.render(40, plain).lines[2].startsWith("› /mcp"));
  deepEqual(press(editor, key("enter")), { type: "changed" });
  equal(editor.text, "/mcp ");
  equal(editor.completions, undefined);
});

Deno.test("Editor.handle() opens the slash menu on / and filters it as the person types", () => {
  const commands = () => [
    { name: "/help", description: "List commands" },
    { name: "/mode", description: "Switch mode" },
    { name: "/model", description: "Switch model" },
    { name: "/review", description: "A prompt template" },
  ];
  const editor = new Editor({ commands });
  type(editor, "/");
  deepEqual(editor.completions?.items.map((item) => item.value), [
    "/help",
    "/mode",
    "/model",
    "/review",
  ]);
  const lines = editor.render(80, plain).lines;
  ok(lines.some((line) => line.includes("/review") && line.includes("A prompt template")));
  ok(lines.at(-1)!.startsWith("  4 commands · ↑↓ choose · Enter run"), lines.at(-1));
  type(editor, "mod");
  deepEqual(editor.completions?.items.map((item) => item.value), ["/mode", "/model"]);
  type(editor, "e");
  // Enter runs the selected command: the exact name typed comes first.
  press(editor, key("backspace"), key("backspace"));
  equal(editor.text, "/mo");
  press(editor, key("down"));
  deepEqual(press(editor, key("enter")), { type: "submit", text: "/model" });
  // A word after the command, or no command that matches, closes the menu.
  type(editor, "/mode x");
  equal(editor.completions, undefined);
  editor.clear();
  type(editor, "/usr/bin");
  equal(editor.completions, undefined);
  deepEqual(press(editor, key("enter")), { type: "submit", text: "/usr/bin" });
  type(editor, "/he");
  press(editor, key("escape"));
  equal(editor.completions, undefined);
  equal(editor.text, "/he");
});

Deno.test("Editor.handle() inserts the common prefix and closes the list on Esc", () => {
  const commands = () => [
    { name: "session", description: "" },
    { name: "sessions", description: "" },
  ];
  const editor = new Editor({ commands });
  type(editor, "/se");
  press(editor, key("tab"));
  equal(editor.text, "/session");
  ok(editor.completions);
  deepEqual(press(editor, key("escape")), { type: "changed" });
  equal(editor.completions, undefined);
  equal(editor.render(40, plain).lines.length, 1);
});

Deno.test("Editor.handle() completes @paths from a real directory when they arrive", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "src"));
    await Deno.writeTextFile(join(dir, "src", "main.ts"), "");
    await Deno.writeTextFile(join(dir, "src", "mod.ts"), "");
    let changes = 0;
    const editor = new Editor({
      paths: (partial) => completePath(dir, partial),
      onChange: () => changes++,
    });
    type(editor, "look at @sr");
    deepEqual(press(editor, key("tab")), { type: "changed" });
    await editor.whenSettled();
    equal(editor.text, "look at @src/");
    equal(changes, 1);
    press(editor, key("tab"));
    await editor.whenSettled();
    equal(editor.text, "look at @src/m");
    deepEqual(editor.completions?.items.map((item) => item.value), ["src/main.ts", "src/mod.ts"]);
    press(editor, key("down"), key("enter"));
    equal(editor.text, "look at @src/mod.ts ");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Editor.handle() drops a path completion that arrives after more typing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "readme.md"), "");
    const editor = new Editor({ paths: (partial) => completePath(dir, partial) });
    type(editor, "@re");
    press(editor, key("tab"));
    type(editor, "x");
    await editor.whenSettled();
    equal(editor.text, "@rex");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Editor.render() shows the prompt, continuation indent, placeholder and cursor", () => {
  const editor = new Editor();
  deepEqual(editor.render(30, plain, { placeholder: "Ask anything" }), {
    lines: ["› Ask anything"],
    cursor: { row: 0, col: 2 },
  });
  editor.text = "one\ntwo";
  deepEqual(editor.render(30, plain), { lines: ["› one", "  two"], cursor: { row: 1, col: 5 } });
  editor.clear();
  ok(editor.render(30, themeFor(true), { placeholder: "Ask" }).lines[0].includes("\x1b[2mAsk"));
});

Deno.test("Editor.render() soft-wraps at word boundaries and places the cursor in cells", () => {
  const editor = new Editor();
  type(editor, "hello world again");
  const frame = editor.render(12, plain);
  deepEqual(frame.lines, ["› hello ", "  world ", "  again"]);
  deepEqual(frame.cursor, { row: 2, col: 7 });
});

Deno.test("Editor.render() keeps every line within the width for CJK text at widths 10 to 80", () => {
  const editor = new Editor();
  type(editor, "漢字かな交じり文 mixed with ascii and 👍🏽 emoji, 한국어 텍스트도 ");
  press(editor, key("enter", { shift: true }));
  type(editor, "日本語".repeat(20));
  press(editor, key("left"), key("left"), key("left"));
  for (let width = 10; width <= 80; width++) {
    for (const theme of [plain, themeFor(true)]) {
      const frame = editor.render(width, theme, { maxRows: 50 });
      for (const line of frame.lines) ok(visibleWidth(line) <= width, `${width}: ${line}`);
      ok(frame.cursor.col < width, `cursor at ${frame.cursor.col} for width ${width}`);
      const text = frame.lines.map((line) => line.slice(2)).join("");
      if (theme === plain) {
        equal(text.replaceAll(" ", ""), editor.text.replace("\n", "").replaceAll(" ", ""));
      }
    }
  }
});

Deno.test("Editor.render() scrolls so the cursor row stays visible beyond maxRows", () => {
  const editor = new Editor();
  editor.text = Array.from({ length: 20 }, (_, i) => `row ${i}`).join("\n");
  let frame = editor.render(40, plain, { maxRows: 5 });
  equal(frame.lines.length, 5);
  equal(frame.lines[4], "  row 19");
  equal(frame.cursor.row, 4);
  equal(frame.lines[0], "↑ row 15");
  for (let i = 0; i < 19; i++) press(editor, key("up"));
  frame = editor.render(40, plain, { maxRows: 5 });
  deepEqual(frame.lines, ["› row 0", "  row 1", "  row 2", "  row 3", "↓ row 4"]);
  equal(frame.cursor.row, 0);
});

Deno.test("Editor.handle() moves up and down by rows of a wrapped line after a render", () => {
  const editor = new Editor();
  type(editor, "aaaa bbbb cccc");
  editor.render(9, plain);
  press(editor, key("up"));
  deepEqual(editor.cursor, { row: 0, col: 9 });
});

Deno.test("Editor.render() puts the cursor after Thai, Indic and emoji text at the width libraries' count", async () => {
  await loadWidth();
  for (const text of ["สวัสดีครับ", "नमस्ते", "👍🏽 ok", "e\u0301te\u0301"]) {
    const editor = new Editor();
    for (const char of text) editor.handle(textKey(char));
    const frame = editor.render(80, themeFor(false));
    // The prompt "› " is 2 cells; the cursor sits right after the text, as terminals draw it
    // (the upper bound used to measure the live region's rows would put it far to the right).
    equal(frame.cursor.col, 2 + exactWidth(text), text);
  }
});
