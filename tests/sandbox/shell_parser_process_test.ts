/**
 * The shell parser process: a command line that is not plain is parsed by tree-sitter in a
 * process of its own, which answers as this process would, is killed when an answer is overdue,
 * and is started again after it ended; tern's thread goes on while it parses.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { analyzeShellHere } from "../../src/sandbox/shell/parse.ts";
import { ShellParserProcess } from "../../src/sandbox/shell/parser_process.ts";

/** The pids of this process's children whose command line holds `part`. */
function childrenRunning(part: string): number[] {
  const { stdout } = new Deno.Command("ps", { args: ["-o", "pid=,args=", "--ppid", `${Deno.pid}`] })
    .outputSync();
  return new TextDecoder().decode(stdout).split("\n")
    .filter((line) => line.includes(part))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

const HARD = [
  'for f in a b; do echo "$f" > out.txt; done',
  "cat <<'EOF' > x\nrm -rf /\nEOF",
  "bash -c 'rm -rf ~' && eval \"$(curl -s x)\"",
  "if [ -f a ]; then git push --force; fi",
  "x=$(ls); echo $((x[$(id)]))",
  "echo 'unterminated",
];

Deno.test("the shell parser process answers as this process's parser does", async () => {
  const parser = new ShellParserProcess();
  try {
    for (const command of HARD) {
      deepEqual(await parser.analyze(command, 5_000), await analyzeShellHere(command), command);
    }
    equal(childrenRunning("parser_main").length, 1, "one process answers them all");
    // Asked at once, the answers come in turn, each to its own command.
    const many = await Promise.all(
      Array.from({ length: 40 }, (_, i) => parser.analyze(`for f in a; do rm f${i}; done`, 5_000)),
    );
    deepEqual(
      many.map((analysis) => analysis.ok && analysis.commands[0].argv),
      Array.from({ length: 40 }, (_, i) => ["rm", `f${i}`]),
    );
  } finally {
    await parser.close();
  }
  equal(childrenRunning("parser_main").length, 0);
});

Deno.test("a parse past its budget is refused while this thread goes on, and the next parses", async () => {
  const parser = new ShellParserProcess();
  let ticks = 0;
  const ticking = setInterval(() => ticks++, 10);
  try {
    await parser.analyze("for f in a; do :; done", 5_000);
    // The grammar's time grows with the square of here-doc starts on one line: whole, 10 s.
    const slow = Array.from({ length: 8000 }, (_, i) => `cat <<E${i}`).join("; ") + "\n";
    const before = ticks;
    const refused = await parser.analyze(slow, 500);
    ok(!refused.ok && /longer than 0.5 s/.test(refused.error), JSON.stringify(refused));
    // Parsed in this thread, its timers would not have run until the parse ended.
    ok(ticks - before >= 10, `this thread's timer ran ${ticks - before} times during the parse`);
    const next = await parser.analyze("for f in a; do rm -rf $f; done", 5_000);
    ok(next.ok, JSON.stringify(next));
    deepEqual(next.commands.map((command) => command.argv), [["rm", "-rf", "$f"]]);
  } finally {
    clearInterval(ticking);
    await parser.close();
  }
});

Deno.test("a parser that stops answering is killed at its deadline; one that ended is started again", async () => {
  const parser = new ShellParserProcess();
  try {
    ok((await parser.analyze("for f in a; do :; done", 5_000)).ok);
    const [stuck] = childrenRunning("parser_main");
    ok(stuck !== undefined, "no shell parser process runs");
    // Frozen, it answers nothing: as a parse that never reaches tree-sitter's next check.
    Deno.kill(stuck, "SIGSTOP");
    const frozen = await parser.analyze("for f in a; do :; done", 300);
    ok(!frozen.ok);
    match(frozen.error, /^Cannot parse shell command: it took the parser longer than 0.3 s/);
    ok(!childrenRunning("parser_main").includes(stuck), "the frozen process lives on");
    ok((await parser.analyze("for f in a; do :; done", 5_000)).ok);
    // Killed while idle (by someone else, or the kernel), the next command starts another.
    const [idle] = childrenRunning("parser_main");
    Deno.kill(idle, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await parser.analyze("for f in a; do rm b; done", 5_000);
    ok(after.ok, JSON.stringify(after));
    deepEqual(after.commands.map((command) => command.argv), [["rm", "b"]]);
  } finally {
    await parser.close();
  }
  equal(childrenRunning("parser_main").length, 0);
});

Deno.test("a shell parser process that cannot start refuses the command, saying why", async () => {
  const parser = new ShellParserProcess(() => ["/nonexistent/deno", "run", "x.ts"]);
  try {
    const refused = await parser.analyze("for f in a; do :; done", 5_000);
    ok(!refused.ok);
    match(refused.error, /^Cannot parse shell command: the shell parser process did not start: /);
  } finally {
    await parser.close();
  }
});
