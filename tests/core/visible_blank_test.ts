import { equal } from "node:assert/strict";
import { visibleText } from "../../src/core/terminal_text.ts";

Deno.test("visibleText() counts a run of a blank glyph instead of drawing it", () => {
  const blanks = ["\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u200b", "\u00a0", "\ufe0f"];
  for (const blank of blanks) {
    const code = blank.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    equal(visibleText(`ls${blank.repeat(500)}; rm -rf ~`), `ls⟨500 × U+${code}⟩; rm -rf ~`);
    equal(visibleText(`a${blank}b`), `a⟨U+${code}⟩b`);
  }
});

Deno.test("visibleText() shows private-use characters by their code point", () => {
  equal(visibleText("x\u{f0000}\u{f0000}y\ue000"), "x⟨2 × U+F0000⟩y⟨U+E000⟩");
});

Deno.test("visibleText() counts spaces from the run length asked for", () => {
  equal(visibleText("a" + " ".repeat(10) + "b"), "a⟨10 spaces⟩b");
  equal(visibleText("a" + " ".repeat(10) + "b", { spaces: 24 }), "a" + " ".repeat(10) + "b");
  equal(visibleText("a" + " ".repeat(30) + "b", { spaces: 24 }), "a⟨30 spaces⟩b");
});
