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
const HOSTILE: ReadonlyArray<{ line: string; less?: boolean; marker?: string }> = [
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
  // A test nested under `&&`, `-a`, `!` or parentheses evaluates subscripts as one alone does.
  { line: "[[ -n x && -v 'a[$(touch ran-23)]' ]]" },
  { line: "[ -n x -a -v 'a[$(touch ran-24)]' ]" },
  { line: "x='b[$(touch ran-25)]'; [[ ( x -gt 1 ) ]]" },
  // Substitutions tree-sitter reads as text.
  { line: "echo ${x:-`touch ran-26`}" },
  { line: "cat <<EOF\n`touch ran-27`\nEOF" },
  { line: "cat <<-EOF\n\t$(touch ran-28)\n\tEOF" },
  // A wrapper's argument that bash makes several words moves where the command starts.
  { line: "timeout {5,bin/ls} whoami", marker: "ran-whoami" },
  { line: "env -u {X,bin/ls} pwd", marker: "ran-pwd" },
  { line: "x='1 bin/ls'; nice -n $x id", marker: "ran-id" },
  // `set -ok` is `-o` and `-k`: `PATH=bin` is then ls's environment, where bash looks it up.
  { line: "set -ok; ls 32 PATH=bin" },
  // git config reads options only before its first other word; the others are values.
  { line: "git config --file ran-33 a.b list" },
  { line: "git config --file ran-34 a.b c --list" },
  // Every git command that takes log or diff options writes --output.
  { line: "git rev-list --output=ran-35 HEAD" },
  { line: "git blame --output=ran-36 README.md" },
  { line: "git stash list --output=ran-37" },
  // Assignments that do not look like one: PATH is then a workspace folder.
  { line: "unset PATH; : ${PATH:=bin}; ls 38" },
  { line: "true {PATH}<README.md; ls 39" },
  { line: ': ${BASH_CMDS["ls"]:=/usr/bin/touch}; ls ran-40' },
  // Without PATH, bash looks a command up in the current folder.
  { line: "unset PATH; whoami 41" },
];

/** Lines after `set -o history -H`: bash rewrites each before it parses it. */
const HISTORY = "set -o history -H\nfind README.md -name -fxrint -o !#:3:s/x/p/ ran-history";

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
  "git config core.pager 'touch ran' --list",
  "git remote -v add evil https://example.com/x",
  "git remote --verbose set-url origin x",
  "set -o histexpand",
  "shopt -so histexpand",
  "git stash show --output=x",
  "git reflog show --output=x",
];

Deno.test("classifyShell(): a look-alike that runs code or writes a file is never read-only", async () => {
  const readOnly: string[] = [];
  for (const line of [...HOSTILE.map((item) => item.line), HISTORY, ...CLASSIFIED_ONLY]) {
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
      "[[ -f README.md && -d src ]]",
      "[ -n x -a -f README.md ]",
      "timeout 5 ls",
      "env -u X nice -n 5 ls",
      "set +o history",
      "git config --get user.name",
      "git config -f .gitmodules --list",
      "git config get user.name",
      "git remote -v",
      "git stash list",
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
    await gitRepository(box.ws);
    await Deno.copyFile(join(box.ws, "bin", "ls"), join(box.ws, "whoami"));
    // `{PATH}<f` sets PATH to the number of the descriptor it opens.
    for (let fd = 10; fd < 20; fd++) {
      await Deno.mkdir(join(box.ws, `${fd}`));
      await Deno.copyFile(join(box.ws, "bin", "ls"), join(box.ws, `${fd}`, "ls"));
    }
    for (const [n, { line, less, marker: named }] of HOSTILE.entries()) {
      if (less && !hasLess) continue;
      const marker = named ?? (less && !line.includes("ran-") ? "ran-less" : `ran-${n + 1}`);
      await Deno.remove(join(box.ws, marker)).catch(() => {});
      const result = await box.run(`{ ${line}\n} >/dev/null 2>&1`);
      const ran = await Deno.stat(join(box.ws, marker)).then(() => true, () => false);
      ok(ran, `${line} did not run its code: ${result.output}`);
    }
  });
});

bwrapTest("createSandbox() shell: history expansion rewrites a line after set -H", async () => {
  await withViewBox(async (box) => {
    const result = await box.run(HISTORY);
    const ran = await Deno.stat(join(box.ws, "ran-history")).then(() => true, () => false);
    ok(ran, `the rewritten find did not write its file: ${result.output}`);
  });
});

/** A repository in `dir` with README.md committed and one stash. */
async function gitRepository(dir: string): Promise<void> {
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", {
      args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).output();
    ok(out.success, new TextDecoder().decode(out.stderr));
  };
  await git("init", "-q");
  await git("add", "README.md");
  await git("commit", "-qm", "x");
  await Deno.writeTextFile(join(dir, "README.md"), "changed\n");
  await git("stash", "-q");
}
