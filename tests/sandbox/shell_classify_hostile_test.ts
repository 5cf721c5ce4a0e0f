/**
 * Adversarial look-alikes of read-only commands, each read as bash (or the program) reads it:
 * nested tests, substitutions the grammar leaves as text, wrapper arguments that bash splits,
 * option clusters, git's own option parsing, history expansion, and input from a file only known
 * when the command runs. `bwrap_hostile_classify_test.ts` runs the ones it can to show they do
 * run code or write.
 */
import { deepEqual } from "node:assert/strict";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";

const UNREAD = "hides code: a substitution the parser reads as text";
const ARITHMETIC = "hides code: arithmetic on a variable";

/** Command lines that are not read-only: the worst label, then every reason in order. */
const NOT_READ_ONLY: [string, string, string[]][] = [
  // A test nested under `&&`, `-a`, `!` or parentheses evaluates a subscript as one alone.
  ["[[ -n x && -v 'a[$(id)]' ]]", "runs-code", [ARITHMETIC]],
  ["[[ ( a -gt 1 ) ]]", "runs-code", [ARITHMETIC]],
  ["[[ -f a || ( -n b && c -eq 1 ) ]]", "runs-code", [ARITHMETIC]],
  ["[ -n x -a -v 'a[$(id)]' ]", "runs-code", [
    ARITHMETIC,
    '"[ -v" evaluates array subscripts, which can run code',
  ]],
  // Substitutions tree-sitter reads as text, which bash runs.
  ["echo ${x:-`id`}", "runs-code", [UNREAD]],
  ['echo "${x:-`id`}"', "runs-code", [UNREAD]],
  ["cat <<EOF\n`id`\nEOF", "runs-code", [UNREAD]],
  ["cat <<-EOF\n\t$(id)\n\tEOF", "runs-code", [UNREAD]],
  // A wrapper's argument that bash may split or expand moves where the command starts.
  ["timeout {5,bash} ls", "runs-code", [
    'hides code: timeout argument "{5,bash}" only known when it runs',
  ]],
  ["timeout * ls", "runs-code", ['hides code: timeout argument "*" only known when it runs']],
  ["x='1 rm'; nice -n $x ls", "runs-code", [
    'hides code: nice argument "$x" only known when it runs',
  ]],
  ["env -u {X,rm} cat f", "runs-code", [
    'hides code: env argument "{X,rm}" only known when it runs',
  ]],
  ["stdbuf -o * ls", "runs-code", ['hides code: stdbuf argument "*" only known when it runs']],
  // After `--` a wrapper still takes its operands and assignments before the command.
  ["timeout -- 5 rm x", "destructive", ['"rm" deletes or overwrites data']],
  ["env -- HOME=x git status", "runs-code", [
    '"HOME" in the environment can change what programs load or run',
  ]],
  // bash's `set`: `-o` in a cluster takes the next word, the other letters stay options.
  ["set -ok", "runs-code", ['"set -k" puts later commands\' variables in their environment']],
  ["set -eH", "runs-code", ['"set -H" rewrites later lines with history expansion']],
  ["set -o histexpand", "runs-code", [
    '"set -o histexpand" rewrites later lines with history expansion',
  ]],
  ["shopt -so histexpand", "runs-code", [
    '"shopt -o histexpand" rewrites later lines with history expansion',
  ]],
  ["set -o history -H\nfind . -name -dxlete -o !#:3:s/x/e/", "runs-code", [
    '"set -H" rewrites later lines with history expansion',
  ]],
  // git config reads options only before its first other word.
  ["git config core.pager x --list", "writes-files", [
    '"git config" without --get or --list changes settings',
  ]],
  ["git config core.editor list", "writes-files", [
    '"git config" without --get or --list changes settings',
  ]],
  ["git config --file f a.b get", "writes-files", [
    '"git config" without --get or --list changes settings',
  ]],
  ["git config --global --add alias.x list", "writes-files", [
    '"git config --add" changes settings',
  ]],
  ["git config --ed --list", "writes-files", ['"git config --ed" changes settings']],
  // `-v` before git remote's subcommand does not make it a listing.
  ["git remote -v add x https://example.com/x", "writes-files", [
    '"git remote add" is not a listing',
  ]],
  ["git remote --verbose show origin", "network", ['"git remote show" is not a listing']],
  // Every command taking log or diff options writes --output.
  ["git blame --output=x a.ts", "writes-files", ['"git blame --output" writes a file']],
  ["git rev-list --out x HEAD", "writes-files", ['"git rev-list --out" writes a file']],
  ["git stash list --output=x", "writes-files", ['"git stash --output" writes a file']],
  ["git stash show --ext-diff", "runs-code", [
    '"git stash --ext-diff" runs an external diff program',
  ]],
  // An option listed as taking a value hid the word after it.
  ["xxd -C in out", "writes-files", ['"xxd" with two files writes the second']],
  ["hash -dp /bin/rm ls; ls x", "runs-code", [
    '"hash -p" makes a command name run another program',
  ]],
  // Assignments that do not look like one.
  [": ${PATH:=bin}; ls", "runs-code", [
    "hides code: an expansion assigns PATH, which programs may read",
  ]],
  [': ${BASH_CMDS["ls"]:=/bin/rm}; ls x', "runs-code", [
    "hides code: an expansion assigns BASH_CMDS, which programs may read",
  ]],
  ['echo "${HOME=x}"', "runs-code", [
    "hides code: an expansion assigns HOME, which programs may read",
  ]],
  ["unset PATH; cat f", "runs-code", [
    '"PATH" in the environment can change what programs load or run',
  ]],
  ["true {PATH}<f; ls", "runs-code", [
    "hides code: a redirection assigns PATH, which programs may read",
  ]],
  ["unset {PATH}>/dev/null", "runs-code", [
    "hides code: a redirection assigns PATH, which programs may read",
  ]],
  // bash opens /dev/tcp/host/port for a name only known when it runs too.
  ["x=/dev/tcp/1.2.3.4/80; cat < $x", "network", [
    'redirection from "$x" may open a network connection',
  ]],
  ['cat 0< "$f"', "network", ['redirection from ""$f"" may open a network connection']],
];

/** Look-alikes that only read, which must stay read-only. */
const READ_ONLY: string[] = [
  "[[ -f a && -d b ]]",
  "[[ 1 -lt 2 && ( -n x ) ]]",
  "[ -n x -a -f y ]",
  "echo ${x:-'`id`'} \\`",
  "cat <<'EOF'\n`id` $(id)\nEOF",
  "cat <<EOF\n\\`id\\`\nEOF",
  "timeout 5 ls",
  "env -u X nice -n 5 stdbuf -o0 ls",
  "xargs -I {} ls {}",
  "set -euo pipefail",
  "set +o keyword",
  "set -- -k",
  "set x -k",
  "shopt -uo histexpand",
  "git config --get user.name",
  "git config -f .gitmodules --list",
  "git config --type=bool --get a.b",
  "git config get user.name",
  "git config list",
  "git remote -v",
  "git remote --verbose get-url origin",
  "git stash list",
  "git log --output-indicator-new=+",
  "xxd -c 16 in",
  "hash -d ls",
  "cat < f",
  "cat <&0",
  "cat <<< $x",
  'echo ${x:=1} ${PATH:-x} ${PATH:+y} ${a["k"]:=1}',
  "cat {fd}<f",
  "unset x y; unset -f ls",
  "echo {PATH} <f",
];

for (const [command, label, reasons] of NOT_READ_ONLY) {
  Deno.test(`classifyShell() labels ${JSON.stringify(command)} ${label}`, async () => {
    const found = await classifyShell(command);
    deepEqual([found.label, found.reasons, found.readOnly], [label, reasons, false]);
  });
}

for (const command of READ_ONLY) {
  Deno.test(`classifyShell() keeps ${JSON.stringify(command)} read-only`, async () => {
    const found = await classifyShell(command);
    deepEqual([found.label, found.reasons, found.readOnly], ["read-only", [], true]);
  });
}
