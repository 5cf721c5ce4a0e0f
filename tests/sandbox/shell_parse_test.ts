import { deepEqual, equal, match, ok } from "node:assert/strict";
import { analyzeShell, type SimpleCommand } from "../../src/sandbox/shell/parse.ts";
import { loadBashParser } from "../../src/sandbox/shell/_tree_sitter.ts";

/** A case: each expected command lists only the fields it asserts. */
interface Case {
  claim: string;
  command: string;
  commands: Partial<SimpleCommand>[];
  opaque?: string[];
}

const evals = (n: number): string[] => Array(n).fill("eval");
const sub = (argv: string[]): Partial<SimpleCommand> => ({ argv, inSubstitution: true });

const CASES: Case[] = [
  {
    claim: "splits on ; && || | & and newlines",
    command: "a; b && c || d | e & f\ng",
    commands: [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]].map((argv) => ({ argv })),
  },
  {
    claim: "returns every part of `a && evil`",
    command: "ls -la && rm -rf ~",
    commands: [{ argv: ["ls", "-la"] }, { argv: ["rm", "-rf", "~"] }],
  },
  {
    claim: "returns commands in $( ) as substitutions",
    command: "echo $(evil --now)",
    commands: [{ argv: ["echo", "$(evil --now)"], inSubstitution: false }, sub(["evil", "--now"])],
    opaque: ["command substitution"],
  },
  {
    claim: "returns commands in backticks as substitutions",
    command: "echo `whoami`",
    commands: [{ argv: ["echo", "`whoami`"] }, sub(["whoami"])],
    opaque: ["command substitution"],
  },
  {
    claim: "returns commands of nested substitutions",
    command: 'cat "$(dirname "$(which rm)")"',
    commands: [{ argv: ["cat", '"$(dirname "$(which rm)")"'] }, sub(["dirname", '"$(which rm)"']), {
      argv: ["which", "rm"],
      inSubstitution: true,
    }],
    opaque: ["command substitution"],
  },
  {
    claim: "returns commands of process substitutions",
    command: "cat <(curl -s x)",
    commands: [{ argv: ["cat", "<(curl -s x)"] }, sub(["curl", "-s", "x"])],
    opaque: ["process substitution"],
  },
  {
    claim: "looks inside subshells and { } groups",
    command: "(cd a && rm b) | { c; d; }",
    commands: [{ argv: ["cd", "a"] }, { argv: ["rm", "b"] }, { argv: ["c"] }, { argv: ["d"] }],
  },
  {
    claim: "looks inside if, while, for and case bodies",
    command:
      "if test -f a; then rm a; elif b; then c; else d; fi; while read l; do e; done; for i in x; do f $i; done; case $x in y) g;; esac",
    commands: [["test", "-f", "a"], ["rm", "a"], ["b"], ["c"], ["d"], ["read", "l"], ["e"], [
      "f",
      "$i",
    ], ["g"]].map((argv) => ({ argv })),
  },
  {
    claim: "treats a here-doc body as data",
    command: "cat <<EOF\nrm -rf /\nEOF",
    commands: [{ argv: ["cat"], redirects: [{ op: "<<", target: "EOF" }], text: "cat <<EOF" }],
  },
  {
    claim: "finds substitutions in an unquoted here-doc body",
    command: "cat <<EOF\nhello $(evil)\nEOF",
    commands: [{ argv: ["cat"] }, sub(["evil"])],
    opaque: ["command substitution"],
  },
  {
    claim: "leaves a quoted here-doc body alone",
    command: "cat <<'EOF'\n$(evil)\nEOF",
    commands: [{ argv: ["cat"], redirects: [{ op: "<<", target: "EOF" }] }],
  },
  {
    claim: "gives a here-doc to its command and walks the rest of the pipeline",
    command: "ls && cat <<-END | grep a > out\n\tx\n\tEND",
    commands: [
      { argv: ["ls"], redirects: [] },
      { argv: ["cat"], redirects: [{ op: "<<-", target: "END" }] },
      { argv: ["grep", "a"], redirects: [{ op: ">", target: "out" }] },
    ],
  },
  {
    claim: "analyzes a here-doc run by a shell as code",
    command: "bash <<'EOF'\nrm -rf /\nEOF",
    commands: [{ argv: ["bash"] }, sub(["rm", "-rf", "/"])],
    opaque: ["here-doc run by bash"],
  },
  {
    claim: "analyzes the string of bash -c as code",
    command: "bash -c 'rm -rf /'",
    commands: [{ argv: ["bash", "-c", "rm -rf /"] }, sub(["rm", "-rf", "/"])],
    opaque: ["bash -c"],
  },
  {
    claim: "finds -c inside a cluster of shell options",
    command: "sh -euo pipefail -c 'curl x | sh'",
    commands: [{ argv: ["sh", "-euo", "pipefail", "-c", "curl x | sh"] }, sub(["curl", "x"]), {
      argv: ["sh"],
      inSubstitution: true,
    }],
    opaque: ["sh -c", "sh reads code from standard input"],
  },
  {
    claim: "marks a pipe into a shell",
    command: "curl -s x | bash",
    commands: [{ argv: ["curl", "-s", "x"] }, { argv: ["bash"] }],
    opaque: ["bash reads code from standard input"],
  },
  {
    claim: "marks eval of a variable",
    command: 'eval "$x"',
    commands: [{ argv: ["eval", '"$x"'] }],
    opaque: ["eval"],
  },
  {
    claim: "analyzes literal eval code",
    command: "eval 'ls; rm a'",
    commands: [{ argv: ["eval", "ls; rm a"] }, sub(["ls"]), sub(["rm", "a"])],
    opaque: ["eval"],
  },
  {
    claim: "marks source and .",
    command: "source ./env.sh; . ./other.sh",
    commands: [{ argv: ["source", "./env.sh"] }, { argv: [".", "./other.sh"] }],
    opaque: ["source"],
  },
  {
    claim: "marks trap code and analyzes it",
    command: "trap 'rm -rf /' EXIT",
    commands: [{ argv: ["trap", "rm -rf /", "EXIT"] }, sub(["rm", "-rf", "/"])],
    opaque: ["trap"],
  },
  {
    claim: "marks a variable as command name",
    command: '$CMD arg; exec "$X"',
    commands: [{ argv: ["$CMD", "arg"], wrappers: [] }, { argv: ['"$X"'], wrappers: ["exec"] }],
    opaque: ["variable as command name"],
  },
  {
    claim: "marks a glob as command name",
    command: "/bin/r[m] -rf x",
    commands: [{ argv: ["/bin/r[m]", "-rf", "x"] }],
    opaque: ["glob as command name"],
  },
  {
    claim: "marks a function definition and returns its body",
    command: "ls() { rm -rf ~; }; ls",
    commands: [{ argv: ["rm", "-rf", "~"] }, { argv: ["ls"] }],
    opaque: ["function definition"],
  },
  {
    claim: "marks arithmetic on a variable but not on numbers",
    command: "echo $((1 + 2)) $((x + 1))",
    commands: [{ argv: ["echo", "$((1 + 2))", "$((x + 1))"] }],
    opaque: ["arithmetic on a variable"],
  },
  {
    claim: "marks arithmetic commands and tests that read variables",
    command: "((1 + 2)); ((n++)); [[ $n -gt 1 ]]",
    commands: [{ argv: ["((1 + 2))"] }, { argv: ["((", "n++", "))"] }, {
      argv: ["[[", "$n", "-gt", "1", "]]"],
    }],
    opaque: ["arithmetic on a variable"],
  },
  {
    claim: "stops analyzing hidden code nested too deeply",
    command: "eval eval eval eval eval 'rm x'",
    commands: [
      { argv: [...evals(5), "rm x"], inSubstitution: false },
      ...[4, 3, 2, 1].map((n) => sub([...evals(n), "rm", "x"])),
    ],
    opaque: ["eval", "hidden code nested too deeply"],
  },
  {
    claim: "peels env and timeout with their options",
    command: "FOO=1 env -i A=2 timeout -s KILL 5 rm x",
    commands: [{ argv: ["rm", "x"], wrappers: ["env", "timeout"], assignments: ["FOO=1", "A=2"] }],
  },
  {
    claim: "peels xargs, sudo, nice, nohup, stdbuf, command and time",
    command: "sudo -u bob nice -n 5 nohup stdbuf -oL command time xargs -0 -I {} rm {}",
    commands: [{
      argv: ["rm", "{}"],
      wrappers: ["sudo", "nice", "nohup", "stdbuf", "command", "time", "xargs"],
    }],
  },
  {
    claim: "peels a wrapper given by its system path",
    command: "/usr/bin/env A=1 ls",
    commands: [{ argv: ["ls"], wrappers: ["env"], assignments: ["A=1"] }],
  },
  {
    claim: "does not peel wrappers that run nothing",
    command: "env; command -v git; time -o out ls",
    commands: [
      { argv: ["env"], wrappers: [] },
      { argv: ["command", "-v", "git"], wrappers: [] },
      { argv: ["time", "-o", "out", "ls"], wrappers: [] },
    ],
  },
  {
    claim: "marks env -S",
    command: "env -S 'rm x' ls",
    commands: [{ argv: ["ls"], wrappers: ["env"] }],
    opaque: ["env -S"],
  },
  {
    claim: "records redirections with their descriptors",
    command: "ls >out 2>/dev/null >>log 2>&1 <in",
    commands: [{
      argv: ["ls"],
      redirects: [
        { op: ">", target: "out" },
        { op: "2>", target: "/dev/null" },
        { op: ">>", target: "log" },
        { op: "2>&", target: "1" },
        { op: "<", target: "in" },
      ],
      text: "ls >out 2>/dev/null >>log 2>&1 <in",
    }],
  },
  {
    claim: "gives a redirect after a list to its last command",
    command: "a && b > f",
    commands: [{ argv: ["a"], redirects: [] }, {
      argv: ["b"],
      redirects: [{ op: ">", target: "f" }],
    }],
  },
  {
    claim: "keeps a redirection without a command",
    command: "> file",
    commands: [{ argv: [], redirects: [{ op: ">", target: "file" }] }],
  },
  {
    claim: "returns a bare assignment and the substitution in it",
    command: "x=$(evil)",
    commands: [{ argv: [], assignments: ["x=$(evil)"] }, sub(["evil"])],
    opaque: ["command substitution"],
  },
  {
    claim: "removes quotes and backslashes from words",
    command: `\\rm 'a b' "c\\"d" $'e\\tf' r"m" a\\ b`,
    commands: [{ argv: ["rm", "a b", 'c"d', "e\tf", "rm", "a b"] }],
  },
  {
    claim: "says which words expand",
    command: `ls *.ts "$x" '*' {a,b} plain`,
    commands: [{ expands: [false, true, true, false, true, false] }],
  },
  {
    claim: "joins line continuations",
    command: "ls \\\n  -la",
    commands: [{ argv: ["ls", "-la"] }],
  },
  {
    claim: "ignores comments",
    command: "ls # && rm -rf /\n# rm -rf ~",
    commands: [{ argv: ["ls"] }],
  },
  {
    claim: "returns nothing for an empty command",
    command: "  \n",
    commands: [],
  },
  {
    claim: "returns declaration and test commands",
    command: "export A=1 B=two; [[ -f x ]] && unset y",
    commands: [{ argv: ["export", "A=1", "B=two"] }, { argv: ["[[", "-f", "x", "]]"] }, {
      argv: ["unset", "y"],
    }],
  },
];

function pick(command: SimpleCommand, expected: Partial<SimpleCommand>): Partial<SimpleCommand> {
  const keys = Object.keys(expected) as (keyof SimpleCommand)[];
  return Object.fromEntries(keys.map((key) => [key, command[key]]));
}

for (const c of CASES) {
  Deno.test(`analyzeShell() ${c.claim}`, async () => {
    const analysis = await analyzeShell(c.command);
    ok(analysis.ok, `expected ${JSON.stringify(c.command)} to parse`);
    deepEqual(
      analysis.commands.map((command, i) => pick(command, c.commands[i] ?? { argv: [] })),
      c.commands,
    );
    deepEqual(analysis.opaque, c.opaque ?? []);
  });
}

const ERRORS: [string, string, RegExp][] = [
  ["an unterminated double quote", 'echo "oops', /unterminated quote at line 1, column 6/],
  ["an unterminated single quote", "ls\necho 'oops", /unterminated quote at line 2, column 6/],
  ["an unclosed substitution", "echo $(ls", /missing "\)" at line 1, column 10/],
  ["an unclosed backtick", "echo `ls", /missing "`" at line 1, column 9/],
  ["a pipe without a command", "ls |", /missing "word" at line 1, column 5/],
  ["an if without fi", "if true; then ls", /line 1/],
  ["a dangling redirection", "echo a >", /unexpected ">" at line 1, column 8/],
  ["an unterminated here-doc", "cat <<EOF\nno end", /unexpected "<<EOF" at line 1, column 5/],
];

for (const [what, command, message] of ERRORS) {
  Deno.test(`analyzeShell() fails on ${what}`, async () => {
    const analysis = await analyzeShell(command);
    equal(analysis.ok, false);
    if (!analysis.ok) match(analysis.error, /^Cannot parse shell command: /);
    if (!analysis.ok) match(analysis.error, message);
  });
}

Deno.test("loadBashParser() loads the grammar once and reuses it", async () => {
  // Asked twice at once, and again once loaded: one parser.
  const [first, second] = await Promise.all([loadBashParser(), loadBashParser()]);
  equal(first, second);
  equal(first, await loadBashParser());
  const analysis = await analyzeShell("ls");
  ok(analysis.ok);
});
