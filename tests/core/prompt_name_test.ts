import { equal } from "node:assert/strict";
import { promptName } from "../../src/core/prompt_name.ts";

Deno.test("promptName() leaves a plain path, quotes one that would break a line or hide", () => {
  equal(promptName("src/a b/ü.md"), "src/a b/ü.md");
  equal(promptName("a\nb.md"), '"a\\nb.md"');
  equal(promptName("a\rb"), '"a\\rb"');
  equal(promptName("a\u2028b\u202e\u200bc\x85"), '"a\\u2028b\\u202e\\u200bc\\u0085"');
  equal(promptName('q"\x1b[2J'), '"q\\"\\u001b[2J"');
});
