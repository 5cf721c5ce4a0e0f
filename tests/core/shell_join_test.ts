/**
 * `shellJoin()` shows argv on one line, the way bash would read it back: the test hands its
 * output to the real bash and compares the words bash sees with the ones given.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { shellJoin } from "../../src/core/shell_join.ts";

/** The words bash makes of `line`, each printed with a NUL after it. */
async function bashWords(line: string): Promise<string[]> {
  const { code, stdout } = await new Deno.Command("bash", {
    args: ["--norc", "--noprofile", "-c", `printf '%s\\0' ${line}`],
    env: { LC_ALL: "C" },
    stdout: "piped",
  }).output();
  equal(code, 0);
  return new TextDecoder().decode(stdout).split("\0").slice(0, -1);
}

Deno.test("shellJoin() keeps plain words bare and single-quotes the rest", () => {
  equal(shellJoin(["ls", "-la", "/tmp/a.txt"]), "ls -la /tmp/a.txt");
  equal(shellJoin(["echo", "it's here", "$HOME"]), `echo 'it'\\''s here' '$HOME'`);
});

Deno.test("shellJoin() writes a word with a line break or control as $'…' on one line", async () => {
  const folder = "sub\n\n  network     none: no network at all (FORGED)\n  x";
  const argv = [
    "--ro-bind",
    `/w/${folder}/.git`,
    "tab\there",
    "it's \\ back\r",
    "esc\x1b[2Jc1\x9b\x85",
    "bidi\u202eseparator\u2028end",
    "plain words",
  ];
  const line = shellJoin(argv);
  ok(!line.includes("\n"), line);
  // deno-lint-ignore no-control-regex
  ok(!/[\x00-\x1f\x7f-\x9f\u2028\u202e]/.test(line), line);
  equal(
    shellJoin([folder]),
    "$'sub\\n\\n  network     none: no network at all (FORGED)\\n  x'",
  );
  deepEqual(await bashWords(line), argv);
});
