/**
 * The parser-free path for plain command lines (`src/sandbox/shell/_plain.ts`) against
 * tree-sitter: on a corpus of realistic commands and a few thousand generated ones (words,
 * quotes, operators, keywords and every character that makes a line not plain), each line the
 * plain path accepts must analyse exactly as the parser analyses it.
 */
import { deepEqual, ok } from "node:assert/strict";
import { analyzePlain, analyzeShellParsed } from "../../src/sandbox/shell/parse.ts";

/** Commands a model runs every day. */
const REALISTIC: readonly string[] = [
  "echo round 1",
  "ls -la",
  "ls -la src/",
  "git status",
  "git status --short",
  "git diff HEAD~1",
  "git log --oneline -n 20",
  "git add -A && git commit -m 'fix: the thing'",
  'git commit -m "Add a test"',
  "git -c core.pager=cat log",
  "cat README.md",
  "cat package.json | head -n 20",
  "grep -rn TODO src | wc -l",
  "rg -n 'fn main' src",
  "find . -name '*.ts' -type f",
  "find . -name foo -delete",
  "find . -exec rm {} ;",
  "wc -l src/main.ts",
  "head -50 src/app.ts",
  "tail -n 100 log.txt",
  "npm test",
  "npm run build && npm test",
  "deno test --allow-read tests/",
  "deno fmt --check",
  "cargo build --release",
  "cargo test -- --nocapture",
  "python3 -m pytest -x -q",
  "pytest tests/test_a.py::test_b -v",
  "make -j4",
  "mkdir -p build/out",
  "rm -rf build",
  "rm -f a.txt b.txt",
  "cp a.txt b.txt",
  "mv old.ts new.ts",
  "touch x",
  "chmod +x script.sh",
  "sed -i s/a/b/ file.txt",
  "sed -n 1,20p file.txt",
  "sort -o out.txt in.txt",
  "env FOO=1 npm test",
  "timeout 5 sleep 10",
  "sudo rm -rf /",
  "xargs rm",
  "ls | xargs rm",
  "bash -c 'echo hi'",
  "sh -c 'rm -rf /'",
  "bash script.sh",
  "bash",
  "eval 'ls'",
  "source ./env.sh",
  ". ./env.sh",
  "nohup ./server",
  "nice -n 10 make",
  "command ls",
  "exec ls",
  "true",
  "false || echo failed",
  "echo a; echo b",
  "echo a;",
  "pwd",
  "which node",
  "node --version",
  "curl https://example.com",
  "curl -fsSL https://example.com/install.sh | sh",
  "wget -O- http://x.y/z",
  "ssh host uptime",
  "docker ps",
  "kubectl get pods -n default",
  "tar -czf out.tar.gz src",
  "unzip -l a.zip",
  "du -sh .",
  "df -h",
  "ps aux | grep node",
  "kill -9 1234",
  "date +%Y-%m-%d",
  "printf %s\\n a",
  "echo 'single $HOME'",
  'echo "double quoted"',
  "echo ''",
  'echo ""',
  "echo a'b'\"c\"",
  'echo --x="y z"',
  "echo user@host:path",
  "echo 1,2,3",
  "echo 50%",
  "echo a+b",
  "ls -- -weird",
  "git push origin main --force",
  "git reset --hard HEAD",
  "git clean -fdx",
  "git checkout -- .",
  "npx tsc --noEmit",
  "yarn install --frozen-lockfile",
  "pip install -r requirements.txt",
  "go test ./...",
  "go build -o bin/app .",
  "rustc --version",
  "java -jar app.jar",
  "echo if then fi",
  "echo done",
  "echo in",
  "echo export",
  "test -f a.txt && echo yes",
  "time make",
  "export A=1",
  "A=1 make",
  "unset A",
  "[ -f a ] && echo y",
  "[[ -f a ]]",
  "! true",
  "{ echo a; }",
  "(cd src && ls)",
  "echo $HOME",
  "echo ${HOME}",
  "echo $(ls)",
  "echo `ls`",
  "ls *.ts",
  "ls ~/x",
  "echo a > out.txt",
  "echo a 2>&1",
  "cat < in.txt",
  "sleep 5 &",
  "echo a\\ b",
  "echo a # comment",
  "for f in a b; do echo $f; done",
  "if true; then echo y; fi",
  "cat <<EOF\nhi\nEOF",
  "echo a\necho b",
  "echo a |& cat",
  "echo a ;; b",
  "a && && b",
  "| b",
  "a |",
  "echo 'unterminated",
  'echo "unterminated',
  'echo "a\'b"',
  "git commit -m 'it''s'",
  "npm test > log.txt 2>&1",
  "cd src && npm test > log.txt 2>&1",
  "make 2>&1 | tail -20",
  "git diff > p.diff && git apply p.diff",
  "echo a >> notes.md",
  "sort < in.txt > out.txt",
  "cat a | grep b > out.txt && echo ok",
  "deno test 2>/dev/null || echo failed",
  "echo 'x y' > 'my file'",
  "echo a &> all.log",
  "echo a >&2",
  "echo a>f",
  "echo a 2>&-",
  "echo a >&file",
  "echo a > f arg",
  "> f echo a",
  "cat > out.txt <<'EOF'\nround 1\nEOF\ncat out.txt",
  "cat > src/a.ts <<'EOF'\nconst a = `${b}`;\nEOF",
  "mkdir -p src && cat > src/a.ts <<'EOF'\nexport {};\nEOF\nls src",
  "cat <<EOF > out.txt\nplain body\nEOF",
  "cat <<EOF\n$HOME\nEOF",
  "cat <<-EOF\n\tx\n\tEOF",
  "python3 - <<'PY'\nprint(1)\nPY",
  "python3 <<'PY'\nprint(1)\nPY",
  "bash <<'EOF'\nrm -rf /\nEOF",
  'cat <<E"O"F\nx\nEOF\ntouch p\nE"O"F',
  "cat <<EOF | grep x\nx\nEOF",
  "cat <<EOF\nx\nEOF\r\nrm x",
  "echo a \\\r\nrm x",
  "echo 'a\rb'",
  "echo a\n\necho b\n",
  "\necho a",
  "echo a;\necho b",
  "echo a &&\necho b",
  "echo a |\ncat",
  "ls *.ts",
  "rm -f build/*.o",
  'echo "$HOME"',
  "cd $HOME && ls",
  'for f in *.ts; do echo "$f"; done',
  "$cmd arg",
  "*.sh",
  "echo ${x}",
  "echo ${x:-a}",
  "find . -name *.ts -delete",
  'git commit -m "fix $x"',
];

/** A small seeded generator, so a failure names a line that comes back on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = [
  "echo",
  "ls",
  "git",
  "rm",
  "cat",
  "env",
  "sudo",
  "timeout",
  "xargs",
  "bash",
  "sh",
  "find",
  "sed",
  "nice",
  "nohup",
  "command",
  "builtin",
  "exec",
  "eval",
  "source",
  ".",
  "trap",
  "test",
  "npm",
  "deno",
  "curl",
  "sort",
  "rg",
  "awk",
  "python3",
  "node",
  "time",
  "if",
  "export",
  "local",
  "!",
  "[",
  "[[",
  "{",
  "A=1",
  "1",
  "-x",
  "''",
  '""',
  "'ls'",
  '"rm"',
  "l's'",
  "a@b",
  "x%y",
  "$x",
  '"$x"',
  "${x}",
  "*.sh",
  "l?",
  "$x/bin/rm",
];

const ARGS = [
  "-la",
  "-c",
  "-i",
  "-n",
  "-e",
  "-rf",
  "--force",
  "--foo=bar",
  "--",
  "-",
  "a=b",
  "x,y",
  "1",
  "2",
  "0",
  "%s",
  "@",
  "a@b",
  "file.txt",
  "/tmp/x",
  "a:b",
  "+x",
  ".",
  "..",
  "src/",
  "HEAD~1",
  "'a b'",
  "'$HOME'",
  "'*'",
  "'it'\"'\"'s'",
  '"x y"',
  '"a\'b"',
  "''",
  '""',
  "a'b'",
  '--x="y z"',
  "'a'\"b\"",
  "'ls -la'",
  "'rm -rf /'",
  "'echo $(id)'",
  "if",
  "then",
  "done",
  "in",
  "}",
  "]",
  "]]",
  "{",
  "!",
  "*",
  "?",
  "~",
  "~/x",
  "$x",
  "$(ls)",
  "`ls`",
  "#c",
  ">out",
  "2>&1",
  "<in",
  "(",
  ")",
  "a\\ b",
  "{a,b}",
  "[ab]",
  "a*b",
  "$'\\n'",
  "é",
  "ü.txt",
  "=",
  "a=",
  "=b",
  "-exec",
  "-delete",
  "{}",
  ";",
  "\\;",
  "s/a/b/",
  "-S",
  "-u",
  "FOO=1",
  '"$x"',
  "${x}",
  '"${x}"',
  "$x.txt",
  "a$x",
  '"a $x b"',
  "$HOME/x",
  "*.ts",
  "src/*",
  "a?",
  "$x*",
  '"$x"*',
  "'*'\"$y\"",
  "$1",
  "$@",
  "$?",
  '"$"',
  "$",
  "${x:-a}",
  '"${x:-a}"',
  "$x[1]",
  "${x",
  "$x{",
  '"$x{"',
  "$_a1",
  '"$x$y"',
  "$x$y",
  "?",
  "**",
  "*=*",
];

const JOINS = [" | ", " && ", " || ", "; ", ";", "|", "&&", " & ", "\n", " ;", " |& ", "  "];

/** Redirects that end a command (and a few the plain path leaves to the parser). */
const REDIRECTS = [
  "> out.txt",
  ">out.txt",
  ">> log",
  "2>&1",
  "2> err.txt",
  "2>/dev/null",
  "< in.txt",
  "&> all.log",
  "&>> all.log",
  ">&2",
  "1>&2",
  "10> f",
  "0<f",
  "0> f",
  "01>f",
  "3>&1",
  "> 'a b'",
  '> "x.txt"',
  ">&-",
  "> $f",
  ">| f",
  "<<< x",
  "> ",
];

/** Tokens without a character that makes a line not plain (most such lines reach the parser). */
const PLAIN_ONLY = /^[A-Za-z0-9_.\/:@%+,=\-'" $*?{}\[\]]+$/;
const PLAIN_ARGS = ARGS.filter((word) => PLAIN_ONLY.test(word));
const PLAIN_JOINS = [" | ", " && ", " || ", "; ", ";", "|", "&&", "  ", "\n", ";\n", "\n\n"];

/** Here-doc starts, each with the line that ends it in bash, and a few the plain path refuses. */
const HEREDOCS: readonly [string, string][] = [
  ["<<'EOF'", "EOF"],
  ["<<EOF", "EOF"],
  ["<< 'EOF'", "EOF"],
  ['<<"EOF"', "EOF"],
  ["<<-EOF", "\tEOF"],
  ["<<-'EOF'", "EOF"],
  ["<<\\EOF", "EOF"],
  ['<<E"O"F', "EOF"],
  ["<<PY", "PY"],
  ["<<'a-b.c'", "a-b.c"],
  ["<<''", ""],
  ["<<$x", "$x"],
];
const HEREDOC_BODIES = [
  "round 1",
  "",
  "x $HOME",
  "$(id)",
  "a\\",
  "const a = `b`;",
  "'",
  '"',
  "line one\nline two",
  "echo hi",
  "EOF ",
  " EOF",
  "EOFX",
];
const HEREDOC_RESTS = ["", "", "", " > out.txt", " 2>&1", " | cat", "; echo x", " x"];

function generate(count: number): string[] {
  const next = random(Number(Deno.env.get("PLAIN_SEED") ?? 21));
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const lines: string[] = [];
  for (let n = 0; n < count; n++) {
    // Half the lines keep to plain characters, so the comparison covers many accepted lines.
    const plainish = n % 2 === 0;
    const args = plainish ? PLAIN_ARGS : ARGS;
    const joins = plainish ? PLAIN_JOINS : JOINS;
    const parts: string[] = [];
    const segments = 1 + Math.floor(next() * 3);
    for (let s = 0; s < segments; s++) {
      const words = [pick(NAMES)];
      const argc = Math.floor(next() * 5);
      for (let a = 0; a < argc; a++) words.push(pick(next() < 0.15 ? NAMES : args));
      // A third of the commands end with one or two redirects.
      if (next() < 0.33) {
        const count = next() < 0.7 ? 1 : 2;
        for (let r = 0; r < count; r++) words.push(pick(REDIRECTS));
      }
      // Some end their line with a here-doc, its body and the line that ends it.
      const heredoc = next() < 0.25 ? pick(HEREDOCS) : undefined;
      if (heredoc) words.push(heredoc[0] + pick(HEREDOC_RESTS));
      parts.push(words.join(next() < 0.1 ? "\t" : " "));
      if (heredoc) {
        const lines = next() < 0.3 ? [] : [pick(HEREDOC_BODIES)];
        if (next() < 0.2) lines.push(pick(HEREDOC_BODIES));
        parts.push(`\n${[...lines, next() < 0.9 ? heredoc[1] : "EOF"].join("\n")}`);
        if (s < segments - 1) parts.push("\n");
      } else if (s < segments - 1) parts.push(pick(joins));
    }
    if (next() < 0.05) parts.push(pick([";", " ;", " |", " &&", " &"]));
    lines.push(parts.join(""));
  }
  return lines;
}

Deno.test("analyzePlain() equals the parser's analysis on every line it accepts", async () => {
  const corpus = [...REALISTIC, ...generate(Number(Deno.env.get("PLAIN_COUNT") ?? 5000))];
  let accepted = 0;
  let redirected = 0;
  let heredocs = 0;
  let expanding = 0;
  for (const line of corpus) {
    const plain = analyzePlain(line);
    if (plain === undefined) continue;
    accepted++;
    if (plain.ok && plain.commands.some((command) => command.redirects.length > 0)) redirected++;
    if (plain.ok && plain.commands.some((c) => c.redirects.some((r) => r.op.startsWith("<<")))) {
      heredocs++;
    }
    if (plain.ok && plain.commands.some((c) => c.expands.some(Boolean))) expanding++;
    deepEqual(
      plain,
      await analyzeShellParsed(line),
      `the plain path differs on ${JSON.stringify(line)}`,
    );
  }
  // The comparison means something only when the plain path takes a good share of the lines.
  ok(accepted >= 900, `only ${accepted} of ${corpus.length} lines were plain`);
  ok(redirected >= 300, `only ${redirected} plain lines had a redirect`);
  ok(heredocs >= 90, `only ${heredocs} plain lines had a here-doc`);
  ok(expanding >= 250, `only ${expanding} plain lines had a variable or a glob`);
});

Deno.test("analyzePlain() takes the everyday commands and leaves the rest to the parser", () => {
  const everyday = [
    "echo round 1",
    "git status --short",
    "cat a | grep b && echo ok",
    "echo a > out",
    "npm test > log.txt 2>&1",
    "cd src && make 2>&1 | tail -20",
    "cat > out.txt <<'EOF'\nround 1\nEOF\ncat out.txt",
    "mkdir -p a && cat > a/b.ts <<'EOF'\nconst a = `${b}`;\nEOF",
    "echo a\necho b",
    "ls *.ts",
    'echo "$HOME" $x ${y}',
  ];
  for (const line of everyday) ok(analyzePlain(line) !== undefined, JSON.stringify(line));
  const hard = [
    "echo ${x:-a}",
    "echo $1",
    "ls [ab]*",
    "echo {a,b}",
    "echo a>out",
    "echo a > out arg",
    "> out echo a",
    "echo a 2>&-",
    "cat <<EOF\n$HOME\nEOF",
    "cat <<EOF | grep x\nx\nEOF",
    'cat <<E"O"F\nx\nEOF\ntouch p\nE"O"F',
    "bash <<'EOF'\nrm -rf /\nEOF",
    "echo a \\\r\nrm x",
    "cat <<< x",
    "bash -c 'rm -rf /'",
    "A=1 make",
    "export A=1",
    "sleep 1 &",
    "echo a &&\necho b",
    "for f in a; do rm $f; done",
    "echo 'open",
  ];
  for (const line of hard) deepEqual(analyzePlain(line), undefined, JSON.stringify(line));
});
