/**
 * Adversarial: command lines that look read-only but make bash (or the program) run code that
 * a variable or a file holds, or write a file (a sed regex with its delimiter in brackets). A read-only command runs without a person, so each of these
 * must not be classified read-only; each is also run in a real sandbox to show it does run
 * code (it creates a file), so the case is real and not a guess.
 */
import { deepEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";
import { bwrapTest } from "./_bwrap_helpers.ts";
import { withViewBox } from "./_view_box.ts";

const hasLess = await new Deno.Command("less", { args: ["--version"] }).output()
  .then((out) => out.success, () => false);
if (!hasLess) console.warn("\n!!!!! SKIPPING the less cases: less is not installed !!!!!\n");

/** A lesskey source whose `#env` section makes less run a program on each file. */
const LESSKEY = "#env\nLESSOPEN=|touch ran-less; cat %s\n";

/** Each command line creates the file `ran-<n>` in the workspace when it runs. */
const HOSTILE: ReadonlyArray<{ line: string; less?: boolean }> = [
  { line: "jobs -x touch ran-1" },
  { line: "builtin jobs -x -- touch ran-2" },
  { line: "x='$(touch ran-3)'; echo ${x@P}" },
  { line: `x='$(touch ran-4)'; echo "\${x@P}"` },
  { line: "x='a[$(touch ran-5)]'; echo ${!x}" },
  { line: "x='a[$(touch ran-6)]'; echo ${PATH:x}" },
  { line: "x='a[$(touch ran-7)]'; echo ${PATH:0:x}" },
  { line: "x='b[$(touch ran-8)]'; a[x]=1" },
  { line: "x='b[$(touch ran-9)]'; echo ${a[x]}" },
  { line: "x='b[$(touch ran-10)]'; echo ${a[$x]}" },
  { line: "x='$(touch ran-11)'; cat <<EOF\n${x@P}\nEOF" },
  { line: "mapfile -C 'touch ran-12; :' -c 1 lines < README.md" },
  { line: "readarray -tC 'touch ran-13; :' -c 1 lines < README.md" },
  { line: "sleep 0 & wait -n -p 'a[$(touch ran-14)]'" },
  // GNU sed reads a delimiter in a bracket expression as part of the regex.
  { line: "sed -n 's/[/]/x/w ran-15' README.md" },
  { line: "sed -n '/[/]/w ran-16' README.md" },
  { line: "sed -n 's/[[:alpha:]/]/x/gw ran-17' README.md" },
  // A builtin or a loop that assigns PATH: `ls` is then the workspace's `bin/ls`.
  { line: "read PATH < path.txt; ls 18" },
  { line: 'for PATH in "$PWD/bin"; do ls 19; done' },
  // `set -k`: a NAME=value argument is the program's environment (git's HOME, less's LESSOPEN).
  { line: "set -k; less README.md LESSOPEN='|touch ran-20; cat %s'", less: true },
  { line: "less --lesskey-src=keys.txt README.md", less: true },
  { line: "less --lesskey-src keys.txt README.md", less: true },
];

/**
 * Not run: lesskey options this less may not have (`--lesskey-content` is newer) or a binary
 * file, and a scalar PATH bash keeps from becoming an array.
 */
const CLASSIFIED_ONLY = [
  "mapfile -t PATH < path.txt; ls",
  "set -o keyword; git status HOME=evil",
  "set -a; ls",
  "shopt -so keyword; git status HOME=evil",
  "shopt -s -o allexport; ls",
  "less -k keys.bin README.md",
  "less -kkeys.bin README.md",
  "less --lesskey-file=keys.bin README.md",
  "less '--lesskey-content=#env' README.md",
];

Deno.test("classifyShell(): a look-alike that runs code or writes a file is never read-only", async () => {
  const readOnly: string[] = [];
  for (const line of [...HOSTILE.map((item) => item.line), ...CLASSIFIED_ONLY]) {
    if ((await classifyShell(line)).readOnly) readOnly.push(line);
  }
  deepEqual(readOnly, []);
});

Deno.test("classifyShell(): the harmless expansions, builtins, less and sed scripts stay read-only", async () => {
  for (
    const line of [
      "echo ${a[0]} ${a[@]} ${#a[*]} ${!a[@]} ${!pre*} ${x:-y} ${x: -1} ${x:0:3} ${x#*/} ${x@Q}",
      "jobs -l",
      "set -euo pipefail; ls",
      "shopt -s nullglob; ls *.md",
      "shopt -uo keyword; ls",
      "sleep 0 & wait",
      "mapfile -t lines < README.md",
      "while read -r line; do echo $line; done < README.md",
      'for f in *.md; do wc -l "$f"; done',
      "less -N README.md",
      "a[0]=1",
      "sed -n 's/[/]/x/p' README.md",
    ]
  ) {
    ok((await classifyShell(line)).readOnly, line);
  }
});

bwrapTest("createSandbox() shell: each hostile read-only look-alike does run code", async () => {
  await withViewBox(async (box) => {
    await Deno.writeTextFile(join(box.ws, "keys.txt"), LESSKEY);
    await Deno.mkdir(join(box.ws, "bin"));
    await Deno.writeTextFile(join(box.ws, "bin", "ls"), '#!/bin/sh\n/usr/bin/touch "ran-$1"\n', {
      mode: 0o755,
    });
    await Deno.writeTextFile(join(box.ws, "path.txt"), `${join(box.ws, "bin")}\n`);
    for (const [n, { line, less }] of HOSTILE.entries()) {
      if (less && !hasLess) continue;
      const marker = less && !line.includes("ran-") ? "ran-less" : `ran-${n + 1}`;
      await Deno.remove(join(box.ws, marker)).catch(() => {});
      const result = await box.run(`{ ${line}\n} >/dev/null 2>&1`);
      const ran = await Deno.stat(join(box.ws, marker)).then(() => true, () => false);
      ok(ran, `${line} did not run its code: ${result.output}`);
    }
  });
});
