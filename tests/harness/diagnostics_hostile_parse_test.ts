/**
 * A checker's output is read in time linear in its size whatever the repository's files make it
 * say: `bash -n` quotes the line of a syntax error as it is, so a file's line that holds many
 * "x: line 1: " and a carriage return, or a checker's line of white space, once held tern's
 * thread for minutes (each candidate tried to the line's end).
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { parseDiagnostics } from "../../src/harness/diagnostics/parse.ts";

/** Milliseconds `parse` takes. */
function timed(parse: () => unknown): number {
  const start = performance.now();
  parse();
  return performance.now() - start;
}

Deno.test("parseDiagnostics() reads a quoted line that no pattern takes whole in linear time", () => {
  // What `bash -n` prints for a file whose line 3 is this (a syntax error in it).
  const quoted = "`echo " + "x: line 1: ".repeat(30_000) + ")\r'";
  const bash =
    `/w/a.sh: line 3: syntax error near unexpected token \`)'\n/w/a.sh: line 3: ${quoted}\n`;
  let found: unknown;
  const ms = timed(() => found = parseDiagnostics(bash, "bash", "/w"));
  ok(ms < 3_000, `bash output read in ${Math.round(ms)} ms`);
  // The quoted line is not a finding, whatever it holds.
  deepEqual(found, [{
    path: "/w/a.sh",
    line: 3,
    severity: "error",
    message: "syntax error near unexpected token `)'",
  }]);

  for (const separator of ["\r", "\u2028", "\u2029"]) {
    const line = "a:1:".repeat(60_000) + separator;
    const ms = timed(() => parseDiagnostics(line, "line", "/w"));
    ok(ms < 3_000, `a line ending in U+${separator.codePointAt(0)} read in ${Math.round(ms)} ms`);
  }
  const blank = " ".repeat(100_000);
  const blankMs = timed(() => parseDiagnostics(blank, "line", "/w"));
  ok(blankMs < 3_000, `a line of white space read in ${Math.round(blankMs)} ms`);
});

Deno.test("parseDiagnostics() keeps a finding whose message holds a line separator", () => {
  // tsc quotes a string literal type as the file holds it.
  const tsc = "/w/a.ts(2,7): error TS2322: Type '\"a\u2028b\"' is not assignable to type 'number'.";
  const [finding, ...rest] = parseDiagnostics(tsc, "tsc", "/w");
  equal(rest.length, 0);
  equal(finding?.line, 2);
  equal(finding?.message, "TS2322: Type '\"a\u2028b\"' is not assignable to type 'number'.");
  const [line] = parseDiagnostics("  a.py:4:2: error: bad\rthing", "line", "/w");
  equal(line?.path, "/w/a.py");
  equal(line?.message, "bad\rthing");
});
