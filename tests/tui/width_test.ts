import { deepEqual, equal, ok } from "node:assert/strict";
import { Screen } from "../../src/tui/screen.ts";
import {
  loadWidth,
  padToWidth,
  truncateToWidth,
  visibleWidth,
  widthEpoch,
  wrapText,
} from "../../src/tui/width.ts";
import {
  codePointCells,
  fallbackSlice,
  fallbackWidth,
  fallbackWrap,
} from "../../src/tui/width_fallback.ts";

/** Strings whose width is hard to get right, styled and plain. */
const TRICKY = [
  "plain ascii",
  "日本語のテキスト",
  "中文 mixed with ASCII 和 한국어",
  "한국어 가 ᄒᆞᆫ", // precomposed and conjoining jamo
  "👨‍👩‍👧‍👦 family", // ZWJ sequence
  "👍🏽 👋🏿 🏳️‍🌈 🇯🇵 🇺🇳", // modifiers, flag sequences
  "1️⃣ #️⃣ *️⃣ 1⃣", // keycaps, with and without VS16
  "☺︎ ☺️ ⌚︎ ⌚ ✔ ✔️ ‼ ‼️", // text and emoji presentation
  "é e\u0301 a\u0308\u0323 Z\u0351\u0352\u0353", // precomposed and combining
  "क्षत्रिय नमस्ते", // Devanagari conjuncts
  "\u0600\u0661\u0662 \u06dd٣", // Arabic number signs
  "ก่อน ທ່ານ", // Thai, Lao
  "\x1b[31mred\x1b[39m \x1b[1;38;5;208mbold orange\x1b[0m",
  "\x1b[38;2;255;0;0m真\x1b[0m \x1b[4m👍\x1b[24m",
  "\x1b]8;;https://example.com\x07link\x1b]8;;\x07", // OSC 8: counted, never under
  "\x1b[?25l\x1b[2K cursor codes",
  "\x1b[00000m long parameter",
  "tab\there\tand\tthere",
  "bell\x07 nul\x00 del\x7f cr\r",
  "\x9b31m C1 introducer",
  "lone \ud800 surrogate \udc00",
  "zero\u200bwidth\u2060joiner\ufeff",
  "ｆｕｌｌｗｉｄｔｈ ｶﾀｶﾅ ﾞﾟ",
  "— … › · ─ │ ✓ ✗ ✻ ⏎ ↳ ⠋ ● ™ ©",
  "𝒜𝓁𝓅𝒽𝒶 𠀀𠀁 𝄞",
  "\u{e0067}\u{e0062} tags 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}",
];

// deno-lint-ignore no-control-regex
const strip = (s: string) => s.replace(/\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/g, "");
/** Whether `text` is one grapheme (one wider than a narrow width by the bound cannot be split). */
const oneGrapheme = (text: string) => [...new Intl.Segmenter().segment(text)].length === 1;

// Measured before the libraries load; the tests of the upper bound then compare with them.
const LINE = "abc ❤️ cd";
const screen = new Screen({ write: () => {} }, { columns: 9, rows: 5 });
screen.render([LINE]);
const beforeLoad = {
  epoch: widthEpoch(),
  family: visibleWidth("👨‍👩‍👧"),
  cjk: visibleWidth("日本"),
  frame: screen.frame,
};
await loadWidth();

Deno.test("visibleWidth() uses the upper bound until loadWidth() and exact widths after", () => {
  equal(beforeLoad.epoch, 0);
  equal(beforeLoad.family, fallbackWidth("👨‍👩‍👧"));
  ok(beforeLoad.family > 2);
  equal(beforeLoad.cjk, 4);
  equal(widthEpoch(), 1);
  equal(visibleWidth("👍"), 2);
  equal(visibleWidth("日本"), 4);
  // A ZWJ sequence is drawn code point by code point by some terminals: it keeps the bound.
  equal(visibleWidth("👨‍👩‍👧"), fallbackWidth("👨‍👩‍👧"));
});

Deno.test("codePointCells() is never below the width of any code point on its own", () => {
  const ranges = [
    [0, 0xd7ff],
    [0xe000, 0xffff],
    [0x10000, 0x1007f],
    [0x1d400, 0x1d4ff],
    [
      0x1f000,
      0x1faff,
    ],
    [0x20000, 0x200ff],
    [0xe0000, 0xe007f],
  ];
  let narrow = 0;
  for (const [low, high] of ranges) {
    for (let code = low; code <= high; code++) {
      const char = String.fromCodePoint(code);
      const cells = codePointCells(code);
      if (cells < visibleWidth(char)) {
        throw new Error(`U+${code.toString(16)} counts ${cells}, is ${visibleWidth(char)}`);
      }
      if (code >= 0x80 && cells === 1) narrow++;
    }
  }
  ok(narrow > 1000, "Latin, Greek, punctuation and box drawing count one cell");
});

Deno.test("fallbackWidth() is never below the real width of tricky strings", () => {
  for (const text of TRICKY) {
    ok(fallbackWidth(text) >= visibleWidth(text), JSON.stringify(text));
    for (let i = 0; i < text.length; i++) {
      // Every prefix too: a cut can end anywhere, even inside a sequence.
      const part = text.slice(0, i);
      ok(fallbackWidth(part) >= visibleWidth(part), JSON.stringify(part));
    }
  }
});

Deno.test("fallbackWidth() is exact for printable ASCII, CJK, colours and the UI's marks", () => {
  for (
    const text of ["plain ascii", "日本語のテキスト", "\x1b[31mred\x1b[39m", "— … › · ─ ✓ ✗ ⏎"]
  ) {
    equal(fallbackWidth(text), visibleWidth(text), JSON.stringify(text));
  }
});

Deno.test("fallbackSlice() keeps at most the width asked for, escape sequences whole", () => {
  for (const text of TRICKY) {
    for (let width = 0; width <= 12; width++) {
      const { text: cut, cut: wasCut } = fallbackSlice(text, width);
      ok(visibleWidth(cut) <= width, `${JSON.stringify(text)} at ${width}`);
      ok(text.startsWith(cut));
      equal(wasCut, cut !== text);
    }
  }
  equal(fallbackSlice("\x1b[31mred\x1b[39m", 2).text, "\x1b[31mre");
});

Deno.test("fallbackWrap() rows fit the width and keep every character", () => {
  for (const text of TRICKY) {
    for (let width = 2; width <= 12; width++) {
      for (const wordWrap of [true, false]) {
        const rows = fallbackWrap(text, width, { trim: false, wordWrap });
        for (const row of rows) {
          ok(
            visibleWidth(row) <= width || oneGrapheme(strip(row)),
            `${JSON.stringify(row)} of ${JSON.stringify(text)}`,
          );
        }
        const kept = strip(rows.join("")).replaceAll(" ", "");
        equal(kept, strip(text).replaceAll(" ", ""), JSON.stringify(text));
      }
    }
  }
});

Deno.test("fallbackWrap() breaks at spaces and carries styles into the next row", () => {
  deepEqual(fallbackWrap("one two three", 7, { trim: true, wordWrap: true }), [
    "one two",
    "three",
  ]);
  deepEqual(fallbackWrap("abcdefgh", 3, { trim: true, wordWrap: true }), ["abc", "def", "gh"]);
  deepEqual(fallbackWrap("\x1b[1mbold words\x1b[22m after", 6, { trim: true, wordWrap: true }), [
    "\x1b[1mbold\x1b[0m",
    "\x1b[1mwords\x1b[22m",
    "after",
  ]);
  deepEqual(fallbackWrap("\x1b[31mab\x1b[0mcd", 2, { trim: false, wordWrap: false }), [
    "\x1b[31mab\x1b[0m",
    "cd",
  ]);
  // Grapheme pieces stay together where they fit.
  deepEqual(fallbackWrap("ae\u0301b", 3, { trim: false, wordWrap: false }), ["ae\u0301", "b"]);
});

Deno.test("truncateToWidth(), padToWidth() and wrapText() fit the width with the libraries loaded", () => {
  deepEqual(wrapText("日本語 text", 4), ["日本", "語 ", "text"]);
  for (const text of TRICKY) {
    for (let width = 1; width <= 12; width++) {
      ok(visibleWidth(truncateToWidth(text, width)) <= width, JSON.stringify(text));
      equal(visibleWidth(padToWidth(text, width)), width, JSON.stringify(text));
      for (const row of wrapText(text, Math.max(2, width))) {
        ok(visibleWidth(row) <= Math.max(2, width) || oneGrapheme(strip(row)), JSON.stringify(row));
      }
    }
  }
});

Deno.test("Screen cuts a line again once exact widths replace the upper bound", () => {
  ok(fallbackWidth(LINE) > 9, "the bound cuts it");
  equal(beforeLoad.frame[0], "abc ❤️…");
  screen.render([LINE]);
  equal(screen.frame[0], LINE);
  equal(visibleWidth(LINE), 9);
});

Deno.test("visibleWidth() counts blank and ambiguous characters by the upper bound", async () => {
  // Exact widths are loaded (above). string-width with ambiguousIsNarrow off names the East Asian
  // "ambiguous" characters; Default_Ignorable_Code_Point the ones it counts zero cells.
  const { default: stringWidth } = await import("string-width");
  const selector = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
  const ignorable = /\p{Default_Ignorable_Code_Point}/u;
  let checked = 0;
  // The planes that hold such characters; the private-use planes sampled.
  const codes = function* () {
    for (let code = 0x80; code <= 0xffff; code++) if (code < 0xd800 || code > 0xdfff) yield code;
    for (let code = 0x1f000; code <= 0x1f2ff; code++) yield code;
    for (let code = 0xe0000; code <= 0xe0fff; code++) yield code;
    for (let code = 0xf0000; code <= 0x10fffd; code += 251) yield code;
  };
  for (const code of codes()) {
    const char = String.fromCodePoint(code);
    if (selector.test(char)) continue;
    const ambiguous = stringWidth(char, { ambiguousIsNarrow: false }) >
      stringWidth(char, { ambiguousIsNarrow: true });
    if (!ambiguous && !ignorable.test(char)) continue;
    checked++;
    if (visibleWidth(char) < codePointCells(code)) {
      throw new Error(`U+${code.toString(16)} counts ${visibleWidth(char)}, may be drawn wider`);
    }
  }
  ok(checked > 1000, `${checked}`);
  equal(visibleWidth("\u3164"), 2);
  equal(visibleWidth("\uffa0"), 2);
  equal(visibleWidth("\u3248"), 2);
  // The row a model may send to push `›` to the first column: wrapped before the terminal does.
  const row = "xx" + "\u3164".repeat(49) + "› yes, I approve";
  const rows = wrapText(row, 80);
  ok(rows.length > 1, JSON.stringify(rows));
  ok(rows.every((part) => visibleWidth(part) <= 80));
});
