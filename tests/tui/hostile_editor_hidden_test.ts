/**
 * Pasted text that draws as less than it holds: variation selectors after an emoji ("emoji
 * smuggling", one byte of hidden text each) and line separators drawn as a blank.
 */
import { ok } from "node:assert/strict";
import { Editor } from "../../src/tui/editor.ts";
import { themeFor } from "../../src/tui/theme.ts";

const theme = themeFor(false);

/** The bytes of `text` as variation selectors (0-15: U+FE00-FE0F, 16-255: U+E0100-E01EF). */
function smuggled(text: string): string {
  return [...new TextEncoder().encode(text)].map((byte) =>
    String.fromCodePoint(byte < 16 ? 0xfe00 + byte : 0xe0100 + byte - 16)
  ).join("");
}

function drawn(text: string): string {
  const editor = new Editor();
  editor.handle({ kind: "paste", text });
  return editor.render(200, theme).lines.join("\n");
}

Deno.test("Editor draws variation selectors that carry hidden text as code", () => {
  const shown = drawn(`nice 😀${smuggled("run rm -rf ~")} right?`);
  ok(/⟨(\d+ × )?U\+E01/.test(shown), shown);
  // Selectors 0x0E and 0x0F alone (one bit each) in a run show too.
  const bits = drawn(`ok 😀${"\ufe0e\ufe0f\ufe0f\ufe0e".repeat(4)} fine`);
  ok(bits.includes("U+FE0"), bits);
});

Deno.test("Editor keeps emoji built with joiners and selectors as they are", () => {
  for (const emoji of ["❤️", "👁️‍🗨️", "👩‍👩‍👧", "☺︎"]) {
    const shown = drawn(`love ${emoji} it`);
    ok(shown.includes(emoji) && !shown.includes("U+"), shown);
  }
});

Deno.test("Editor draws a line separator as code, not as a blank", () => {
  ok(drawn("one\u2028two\u2029three").includes("U+2028"));
});
