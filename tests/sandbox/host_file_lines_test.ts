/** The lines that ask the person to check files that run code later show each name as it is. */
import { equal, ok } from "node:assert/strict";
import { hostFileLines } from "../../src/sandbox/persistence.ts";

Deno.test("hostFileLines() shows what a file name holds that a terminal would obey or hide", () => {
  const lines = hostFileLines([
    { change: "changed", path: "/ws/.git\u200b/hooks/pre-commit", runs: "git runs it" },
    { change: "created", path: "/ws/a\u202etxt.sh\x1b[2K\nfake", runs: "a shell runs it" },
  ]);
  equal(lines.length, 3);
  ok(lines[1].includes(".git⟨U+200B⟩/hooks/pre-commit"), lines[1]);
  ok(lines[2].includes("a⟨U+202E⟩txt.sh␛[2K↵fake"), lines[2]);
  // deno-lint-ignore no-control-regex
  ok(!/[\u0000-\u001f\u200b\u202e]/.test(lines.join("")), JSON.stringify(lines));
});
