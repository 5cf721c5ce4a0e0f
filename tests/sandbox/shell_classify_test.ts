import { deepEqual, equal, ok } from "node:assert/strict";
import { classifyCommand, classifyShell } from "../../src/sandbox/shell/classify.ts";
import type { SimpleCommand } from "../../src/sandbox/shell/parse.ts";

/** Commands that only read: no review needed. */
const READ_ONLY: string[] = [
  "ls 2>&- >&2 <&0",
  "find . -name '*.ts' | while read -r f; do wc -l \"$f\"; done",
  "((1 + 2))",
  "git log --format='%H %s' -n 5",
  "ls -la src",
  "cat a | grep -n x | wc -l",
  'rg -n "foo" src --glob "*.ts"',
  "head -5 a; tail -n 2 b",
  'find . -name "*.ts" -type f',
  "git status",
  "git -C . log --oneline -5",
  "git diff HEAD~1 -- a.ts",
  "git show HEAD:a.ts",
  "git branch -a",
  'git tag --list "v*"',
  "git remote -v",
  "git rev-parse HEAD",
  "git ls-files",
  "git blame a.ts",
  "sed -n 1,5p f",
  "sed 's/a/b/g' f",
  "sort -k1,1 -u f",
  "ls 2>/dev/null",
  "grep x f 2>&1 >/dev/null",
  "cd src && ls",
  'echo hi; printf "%s\\n" x',
  "jq .name package.json",
  "command -v git",
  "node --version",
  "",
  "# just a comment",
  "export LC_ALL=C; echo $LC_ALL",
  "x=1; echo $x",
  "xargs grep foo",
  "time ls",
  "env",
  "LC_ALL=C sort f",
  "date +%s",
  "wc -l < f",
  "cat <<EOF\nrm -rf /\nEOF",
  // Abbreviated long options of harmless options stay harmless.
  "git diff --sta",
  "git log --onel -3",
  "sort --key 2 f",
  "env --ignore-env ls",
  "timeout --sig KILL 5 ls",
  "git branch --list 'v*'",
];

/** Commands that are not read-only: the worst label, then every reason in order. */
const NOT_READ_ONLY: [string, string, string[]][] = [
  ["read 'a[$(id)]'", "runs-code", ['"read" evaluates an array subscript, which can run code']],
  ["((n++))", "runs-code", ["hides code: arithmetic on a variable"]],
  ["a && evil", "unknown", [
    '"a" is not known to be read-only',
    '"evil" is not known to be read-only',
  ]],
  ["ls && rm -rf ~", "destructive", ['"rm -rf" deletes recursively']],
  ["echo $(evil)", "runs-code", [
    "hides code: command substitution",
    '"evil" is not known to be read-only',
  ]],
  ["echo `evil`", "runs-code", [
    "hides code: command substitution",
    '"evil" is not known to be read-only',
  ]],
  ["echo $(ls $(pwd))", "runs-code", ["hides code: command substitution"]],
  ["bash -c 'rm -rf /'", "destructive", [
    "hides code: bash -c",
    '"bash -c" runs code given inline',
    '"rm -rf" deletes recursively',
  ]],
  ['eval "$x"', "runs-code", ["hides code: eval", '"eval" runs other code']],
  ["source x.sh", "runs-code", ["hides code: source", '"source" runs other code']],
  ["env FOO=1 timeout 5 rm x", "destructive", [
    '"rm" deletes or overwrites data',
    '"FOO" in the environment can change what programs load or run',
  ]],
  ["xargs rm", "destructive", ['"rm" deletes or overwrites data']],
  ["xargs -0 rm -f", "destructive", ['"rm" deletes or overwrites data']],
  ["sudo rm x", "privileged", [
    '"rm" deletes or overwrites data',
    '"sudo" runs "rm" as another user',
  ]],
  ["sudo ls", "privileged", ['"sudo" runs "ls" as another user']],
  ["find . -exec rm {} \\;", "destructive", [
    '"find -exec" runs other commands',
    '"rm" deletes or overwrites data',
  ]],
  ["find . -execdir ls \\;", "runs-code", ['"find -execdir" runs other commands']],
  ["find . -delete", "destructive", ['"find -delete" deletes files']],
  ["find . -fprint out", "writes-files", ['"find -fprint" writes a file']],
  ["git -c core.pager=evil log", "runs-code", ['"git -c" can set options that run commands']],
  ["git --config-env=core.pager=X log", "runs-code", [
    '"git --config-env" can set options that run commands',
  ]],
  ["git --exec-path=/tmp status", "runs-code", ['"git --exec-path" can run other programs']],
  ["git -C . push", "network", ['"git push" uses the network']],
  ["git log --output=x", "writes-files", ['"git log --output" writes a file']],
  ["git diff --output x", "writes-files", ['"git diff --output" writes a file']],
  ["git diff --ext-diff", "runs-code", ['"git diff --ext-diff" runs an external diff program']],
  ["git branch -D old", "writes-files", ['"git branch -D" does more than list']],
  ["git branch new", "writes-files", ['"git branch new" creates a branch']],
  ["git tag v1", "writes-files", ['"git tag v1" creates a tag']],
  ["git grep -O foo", "runs-code", ['"git grep -O" runs a pager program']],
  ["git commit -m x", "writes-files", ['"git commit" is not a read-only git command']],
  ["git clean -fdx", "destructive", ['"git clean" deletes untracked files']],
  ["git reset --hard", "destructive", ['"git reset --hard" discards changes']],
  ["git frob", "writes-files", ['"git frob" is not a read-only git command']],
  ["sed -i s/a/b/ f", "writes-files", ['"sed -i" edits files in place']],
  ["sed --in-place=.bak s/a/b/ f", "writes-files", ['"sed --in-place" edits files in place']],
  ['sed -e "w out" f', "writes-files", ['sed command "w" writes a file']],
  ["sed '1e id' f", "runs-code", ['sed command "e" runs a shell command']],
  ["sed 's/x/id/e' f", "runs-code", ['sed flag "s///e" runs a shell command']],
  ["sort -o out f", "writes-files", ['"sort -o" writes a file']],
  ["sort --compress-program=evil f", "runs-code", ['"sort --compress-program" runs a program']],
  ["rg --pre cat x", "runs-code", ['"rg --pre" runs a program for each file']],
  ["rg -z x", "runs-code", ['"rg -z" runs decompression programs']],
  ["ls > file", "writes-files", ['redirection ">" writes "file"']],
  ["echo x >> log", "writes-files", ['redirection ">>" writes "log"']],
  ["echo x &> all", "writes-files", ['redirection "&>" writes "all"']],
  ["cat <(curl x)", "runs-code", ["hides code: process substitution", '"curl" uses the network']],
  ["curl -s x", "network", ['"curl" uses the network']],
  ["cat < /dev/tcp/1.2.3.4/80", "network", [
    'redirection to "/dev/tcp/1.2.3.4/80" opens a network connection',
  ]],
  ["echo x > /dev/udp/1.2.3.4/53", "network", [
    'redirection to "/dev/udp/1.2.3.4/53" opens a network connection',
  ]],
  ['python3 -c "print(1)"', "runs-code", ['"python3 -c" runs code given inline']],
  ["node -e 1", "runs-code", ['"node -e" runs code given inline']],
  ["deno eval 1", "runs-code", ['"deno eval" runs code given inline']],
  ["perl -e 1", "runs-code", ['"perl -e" runs code given inline']],
  ["bash script.sh", "runs-code", ['"bash" runs a program']],
  ["npm test", "runs-code", ['"npm test" runs project code']],
  ["cargo build", "runs-code", ['"cargo build" runs project code']],
  ['awk "{print}" f', "runs-code", ['"awk" can run commands with system()']],
  ["LD_PRELOAD=x.so ls", "runs-code", [
    '"LD_PRELOAD" in the environment can change what programs load or run',
  ]],
  ["BASH_ENV=x bash -c ls", "runs-code", [
    "hides code: bash -c",
    '"bash -c" runs code given inline',
    '"BASH_ENV" in the environment can change what programs load or run',
  ]],
  ["NODE_OPTIONS=--require=x node a.js", "runs-code", [
    '"node" runs a program',
    '"NODE_OPTIONS" in the environment can change what programs load or run',
  ]],
  ["GIT_CONFIG_COUNT=1 git status", "runs-code", [
    '"GIT_CONFIG_COUNT" in the environment can change what programs load or run',
  ]],
  ["PYTHONSTARTUP=x python", "runs-code", [
    '"python" runs a program',
    '"PYTHONSTARTUP" in the environment can change what programs load or run',
  ]],
  ["env LD_PRELOAD=x ls", "runs-code", [
    '"LD_PRELOAD" in the environment can change what programs load or run',
  ]],
  ["PATH=.:$PATH; ls", "runs-code", [
    '"PATH" in the environment can change what programs load or run',
  ]],
  ["export PATH=/tmp", "runs-code", [
    '"PATH" in the environment can change what programs load or run',
  ]],
  ["rm -rf /", "destructive", ['"rm -rf" deletes recursively']],
  ["rm a", "destructive", ['"rm" deletes or overwrites data']],
  ["mv a b", "writes-files", ['"mv" writes files']],
  ["dd if=/dev/zero of=f", "destructive", ['"dd" deletes or overwrites data']],
  ["tee f", "writes-files", ['"tee" writes files']],
  ["find *", "unknown", ['"find" has an argument only known when it runs']],
  ["find {.,-delete}", "unknown", ['"find" has an argument only known when it runs']],
  ["xargs find", "unknown", ['xargs adds arguments to "find"']],
  ["date -s now", "privileged", ['"date -s" sets the system clock']],
  ["uniq a b", "writes-files", ['"uniq" with two files writes the second']],
  ["./script.sh", "runs-code", ['runs the program "./script.sh"']],
  ["foo --bar", "unknown", ['"foo" is not known to be read-only']],
  ['echo "oops', "unknown", ["Cannot parse shell command: unterminated quote at line 1, column 6"]],
  ['su -c "rm x"', "privileged", [
    "hides code: su -c",
    '"su" needs or changes system privileges',
    '"rm" deletes or overwrites data',
  ]],
  ["doas ls", "privileged", ['"doas" runs "ls" as another user']],
  // getopt_long and git take a long option by any unambiguous prefix: the abbreviation is the
  // option it abbreviates.
  ["sort --out=.env f", "writes-files", ['"sort --out" writes a file']],
  ["sort --comp=sh f", "runs-code", ['"sort --comp" runs a program']],
  ["sed --in s/a/b/ f", "writes-files", ['"sed --in" edits files in place']],
  ["sed --exp 'w /tmp/x' f", "writes-files", ['sed command "w" writes a file']],
  ["git grep --open='id >x' -e y", "runs-code", ['"git grep --open" runs a pager program']],
  ["git diff --outp=.env", "writes-files", ['"git diff --outp" writes a file']],
  ["git show --out x", "writes-files", ['"git show --out" writes a file']],
  ["git diff --ext", "runs-code", ['"git diff --ext" runs an external diff program']],
  ["git branch --del main", "writes-files", ['"git branch --del" does more than list']],
  ["time --out f ls", "writes-files", ['"time --out" writes a file']],
  ["rg --pre=sh x", "runs-code", ['"rg --pre" runs a program for each file']],
  ["rm --rec d", "destructive", ['"rm --rec" deletes recursively']],
  // What makes a command safe counts only when written out whole.
  ["sed --sa 'e id' f", "runs-code", ['sed command "e" runs a shell command']],
  // A wrapper's option that takes a value, abbreviated or missed, must not make its value look
  // like the command.
  ["env --u ls rm -rf x", "destructive", ['"rm -rf" deletes recursively']],
  ["env --spl 'rm x' ls", "runs-code", [
    "hides code: env --spl",
  ]],
  ["xargs --process-slot-var ls rm x", "destructive", ['"rm" deletes or overwrites data']],
  ["stdbuf --out 0 rm x", "destructive", ['"rm" deletes or overwrites data']],
  ["printf -v x hi", "runs-code", [
    '"printf -v" assigns a variable, and its subscript can run code',
  ]],
  ["x=1; echo $((x))", "runs-code", ["hides code: arithmetic on a variable"]],
  ["ls() { rm -rf ~; }; ls", "destructive", [
    "hides code: function definition",
    '"rm -rf" deletes recursively',
  ]],
  ["/bin/r[m] x", "runs-code", [
    "hides code: glob as command name",
    'the command name "/bin/r[m]" is only known when it runs',
  ]],
  // A variable not known to be harmless can point a read-only program at code to run: git's
  // config (core.fsmonitor, aliases) through HOME or XDG_CONFIG_HOME, rg's --pre through its
  // config file.
  ["HOME=evil git status", "runs-code", [
    '"HOME" in the environment can change what programs load or run',
  ]],
  ["XDG_CONFIG_HOME=evil git diff", "runs-code", [
    '"XDG_CONFIG_HOME" in the environment can change what programs load or run',
  ]],
  ["RIPGREP_CONFIG_PATH=evil/rgrc rg -l zzz", "runs-code", [
    '"RIPGREP_CONFIG_PATH" in the environment can change what programs load or run',
  ]],
  ["env HOME=evil git log", "runs-code", [
    '"HOME" in the environment can change what programs load or run',
  ]],
  ["HOME=evil; git status", "runs-code", [
    '"HOME" in the environment can change what programs load or run',
  ]],
  ["export HOME=evil; git status", "runs-code", [
    '"HOME" in the environment can change what programs load or run',
  ]],
  ["export FOO=1; echo $FOO", "runs-code", [
    '"FOO" in the environment can change what programs load or run',
  ]],
  ["LANG=../../evil ls", "runs-code", [
    '"LANG" in the environment can change what programs load or run',
  ]],
  // Another repository's config may be one a tarball shipped, core.fsmonitor included.
  ["git -C sub log", "runs-code", [
    '"git -C" makes git use the config of another repository, which can run programs',
  ]],
  ["git --git-dir=sub/.git log", "runs-code", [
    '"git --git-dir" makes git use the config of another repository, which can run programs',
  ]],
  ["git --work-tree sub status", "runs-code", [
    '"git --work-tree" makes git use the config of another repository, which can run programs',
  ]],
  ["cd sub && git status", "runs-code", [
    '"cd" makes git use the config of another repository, which can run programs',
  ]],
  ["env -C sub git status", "runs-code", [
    '"env --chdir" makes git use the config of another repository, which can run programs',
  ]],
  ["$CMD x", "runs-code", [
    "hides code: variable as command name",
    'the command name "$CMD" is only known when it runs',
  ]],
];

for (const command of READ_ONLY) {
  Deno.test(`classifyShell() labels ${JSON.stringify(command)} read-only`, async () => {
    const found = await classifyShell(command);
    deepEqual([found.label, found.reasons, found.readOnly], ["read-only", [], true]);
  });
}

for (const [command, label, reasons] of NOT_READ_ONLY) {
  Deno.test(`classifyShell() labels ${JSON.stringify(command)} ${label}`, async () => {
    const found = await classifyShell(command);
    deepEqual([found.label, found.reasons, found.readOnly], [label, reasons, false]);
  });
}

function simple(argv: string[], extra: Partial<SimpleCommand> = {}): SimpleCommand {
  return {
    argv,
    expands: argv.map(() => false),
    assignments: [],
    redirects: [],
    wrappers: [],
    chdir: false,
    text: argv.join(" "),
    inSubstitution: false,
    ...extra,
  };
}

Deno.test("classifyCommand() labels a read-only command with its reason", () => {
  deepEqual(classifyCommand(simple(["git", "status"])), {
    label: "read-only",
    reason: '"git" only reads',
  });
});

Deno.test("classifyCommand() gives the most severe finding", () => {
  const command = simple(["cat", "f"], {
    wrappers: ["sudo"],
    redirects: [{ op: ">", target: "out" }],
  });
  deepEqual(classifyCommand(command), {
    label: "privileged",
    reason: '"sudo" runs "cat" as another user',
  });
});

Deno.test("classifyCommand() does not trust an argument that expands", () => {
  const command = simple(["sed", "-n", "$SCRIPT", "f"], { expands: [false, false, true, false] });
  deepEqual(classifyCommand(command), {
    label: "unknown",
    reason: '"sed" has an argument only known when it runs',
  });
});

Deno.test("classifyCommand() strips system bin directories but not other paths", () => {
  equal(classifyCommand(simple(["/usr/bin/cat", "f"])).label, "read-only");
  deepEqual(classifyCommand(simple(["./cat", "f"])), {
    label: "runs-code",
    reason: 'runs the program "./cat"',
  });
});

Deno.test("classifyShell() keeps read-only commands hidden in a substitution out of read-only", async () => {
  const found = await classifyShell("echo $(ls)");
  equal(found.readOnly, false);
  ok(found.analysis.ok);
  if (found.analysis.ok) {
    deepEqual(found.analysis.commands.map((c) => [c.argv, c.inSubstitution]), [
      [["echo", "$(ls)"], false],
      [["ls"], true],
    ]);
  }
});

Deno.test("classifyShell() returns the parse error as the reason", async () => {
  const found = await classifyShell("cat 'a");
  equal(found.analysis.ok, false);
  deepEqual(found.reasons, ["Cannot parse shell command: unterminated quote at line 1, column 5"]);
});
