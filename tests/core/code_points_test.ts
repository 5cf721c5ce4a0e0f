import { equal } from "node:assert/strict";
import { codePointCount, cutBack, cutForward, pairStartsAt } from "../../src/core/code_points.ts";

const EMOJI = "\u{1F600}"; // two UTF-16 units

Deno.test("a cut inside a surrogate pair moves back for a head and forward for a tail", () => {
  const text = `ab${EMOJI}cd`; // a b (high low) c d
  equal(cutBack(text, 3), 2);
  equal(cutForward(text, 3), 4);
  equal(text.slice(0, cutBack(text, 3)), "ab");
  equal(text.slice(cutForward(text, 3)), "cd");
});

Deno.test("a cut between whole characters stays where it is", () => {
  const text = `ab${EMOJI}cd`;
  for (const at of [0, 1, 2, 4, 5, 6]) {
    equal(cutBack(text, at), at);
    equal(cutForward(text, at), at);
  }
});

Deno.test("a lone surrogate is not a pair: a cut beside it stays", () => {
  const loneHigh = "a\ud83dbc";
  const loneLow = "a\ude00bc";
  equal(pairStartsAt(loneHigh, 1), false);
  equal(cutBack(loneHigh, 2), 2);
  equal(cutForward(loneLow, 2), 2);
  equal(pairStartsAt(`a${EMOJI}`, 1), true);
  equal(pairStartsAt(`a${EMOJI}`, 2), false);
});

Deno.test("code points count a pair once and a lone surrogate once", () => {
  equal(codePointCount(""), 0);
  equal(codePointCount(`x${EMOJI}${EMOJI}y`), 4);
  equal(codePointCount("\ud83d\ud83d\ude00"), 2);
  equal(codePointCount("\ude00\ud83d"), 2);
});
