/**
 * The comparison of a check's findings with the last check's: each finding is new as many times
 * as it occurs more often than before, and the last ones are read once each, not once per
 * finding (a hostile repository's checker can print tens of thousands; a search of the last
 * ones for each held tern's thread for minutes).
 */
import { deepEqual, ok } from "node:assert/strict";
import type { Diagnostic } from "../../src/harness/diagnostics/parse.ts";
import { freshFindings, key } from "../../src/harness/diagnostics/edit_diagnostics.ts";

const finding = (message: string, line = 1): Diagnostic => ({
  path: "/w/a.ts",
  line,
  severity: "error",
  message,
});

Deno.test("freshFindings() tells each finding that is new, counting repeats, whatever its line", () => {
  const before = [finding("a"), finding("b"), finding("b")].map(key);
  const found = [finding("b", 9), finding("a", 7), finding("b", 3), finding("b", 4), finding("c")];
  deepEqual(freshFindings(before, found), [finding("b", 4), finding("c")]);
  deepEqual(freshFindings([], found), found);
  deepEqual(freshFindings(found.map(key), found), []);
  // A warning is not the error of the same words.
  deepEqual(freshFindings(before, [{ ...finding("a"), severity: "warning" }]), [
    { ...finding("a"), severity: "warning" },
  ]);
});

Deno.test("freshFindings() reads each of the last check's findings once, for any number of new ones", () => {
  const count = 5_000;
  const keys = Array.from({ length: count }, (_, i) => key(finding(`old ${i}`)));
  let reads = 0;
  const before = new Proxy(keys, {
    get(target, property, receiver) {
      if (typeof property === "string" && /^\d+$/.test(property)) reads++;
      return Reflect.get(target, property, receiver);
    },
  });
  const found = Array.from({ length: count }, (_, i) => finding(`new ${i}`));
  deepEqual(freshFindings(before, found).length, count);
  ok(reads <= count, `${reads} reads of ${count} findings`);
});
