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

/** Waits `ms` milliseconds. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, or "hung" when it has not settled within `ms` (a test fails rather than hangs). */
async function orHung<T>(promise: Promise<T>, ms: number): Promise<T | "hung"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) => timer = setTimeout(() => resolve("hung"), ms));
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("ShellParserProcess.close() refuses a parse under way and later ones, starting no process", async () => {
  const parser = new ShellParserProcess();
  try {
    ok((await parser.analyze("for f in a; do :; done", 5_000)).ok);
    const [running] = childrenRunning("parser_main");
    // Frozen, its answer cannot come before close() kills it.
    Deno.kill(running, "SIGSTOP");
    const underWay = parser.analyze("for f in a; do :; done", 5_000);
    const waiting = parser.analyze("for f in b; do :; done", 5_000);
    await pause(50);
    await parser.close();
    for (const refused of [await underWay, await waiting]) {
      ok(!refused.ok, JSON.stringify(refused));
      match(refused.error, /^Cannot parse shell command: the shell parser was closed/);
    }
    const later = await parser.analyze("for f in c; do :; done", 5_000);
    ok(!later.ok && /was closed/.test(later.error), JSON.stringify(later));
    equal(childrenRunning("parser_main").length, 0, "a process started after close()");
  } finally {
    await parser.close();
  }
});

Deno.test("a shell parser process that stops reading a long command is killed at its deadline", async () => {
  const parser = new ShellParserProcess();
  try {
    ok((await parser.analyze("for f in a; do :; done", 5_000)).ok);
    const [stuck] = childrenRunning("parser_main");
    Deno.kill(stuck, "SIGSTOP");
    // Longer than a pipe holds: its write waits for a reader that never reads.
    const long = `echo ${"a".repeat(400_000)}`;
    const refused = await orHung(parser.analyze(long, 300), 10_000);
    ok(refused !== "hung", "the analysis waited past its deadline for the write");
    ok(!refused.ok && /longer than 0.3 s/.test(refused.error), JSON.stringify(refused));
    ok(!childrenRunning("parser_main").includes(stuck), "the frozen process lives on");
    ok((await parser.analyze(long, 5_000)).ok, "the next command is not parsed");
  } finally {
    await parser.close();
  }
  equal(childrenRunning("parser_main").length, 0);
});

/**
 * A stand-in for the shell parser process that prints, for each request, the lines its command
 * lists (a JSON array), `$ID` in them replaced by the request's id and `$PAD` by 20 MiB of
 * text: answers out of form, turn or length.
 */
const FAKE_PARSER = `
const encoder = new TextEncoder();
await Deno.stdout.write(encoder.encode('{"ready":true}\\n'));
let held = "";
for await (const bytes of Deno.stdin.readable) {
  held += new TextDecoder().decode(bytes);
  for (let end = held.indexOf("\\n"); end !== -1; end = held.indexOf("\\n")) {
    const request = JSON.parse(held.slice(0, end));
    held = held.slice(end + 1);
    for (const line of JSON.parse(request.command)) {
      const text = line.replaceAll("$ID", String(request.id ?? 0))
        .replace("$PAD", () => "x".repeat(20 * 1024 * 1024));
      await Deno.stdout.write(encoder.encode(text + "\\n"));
    }
  }
}
`;

/** An analysis that would let any command through as read-only. */
const LETS_ALL_PASS = '{"ok":true,"commands":[],"opaque":[],"unseen":[]}';

Deno.test("a shell parser process answering out of form or out of turn has the command refused", async () => {
  const parser = new ShellParserProcess(
    () => [Deno.execPath(), "eval", "--no-config", FAKE_PARSER],
  );
  const asked = (lines: string[]) => parser.analyze(JSON.stringify(lines), 5_000);
  try {
    const malformed = [
      "null",
      "42",
      '"text"',
      "[]",
      "{}",
      '{"id":$ID,"analysis":null}',
      '{"id":$ID,"analysis":{"ok":true}}',
      '{"id":$ID,"analysis":{"ok":true,"commands":[{"argv":"rm"}],"opaque":[],"unseen":[]}}',
      '{"id":$ID,"analysis":{"ok":"yes","commands":[],"opaque":[],"unseen":[]}}',
      `{"analysis":${LETS_ALL_PASS}}`,
      `{"id":"$ID","analysis":${LETS_ALL_PASS}}`,
    ];
    for (const line of malformed) {
      const refused = await asked([line]);
      ok(!refused.ok, `${line}: ${JSON.stringify(refused)}`);
      match(refused.error, /^Cannot parse shell command: the shell parser process answered out/);
    }
    // One request answered twice: the second answer is not taken for the next command's.
    const first = await asked([
      `{"id":$ID,"analysis":${LETS_ALL_PASS}}`,
      `{"id":$ID,"analysis":${LETS_ALL_PASS}}`,
    ]);
    ok(first.ok);
    const next = await asked([]);
    ok(!next.ok, JSON.stringify(next));
    match(next.error, /answered out of turn/);
    // Stopped after it, a new process answers the next command.
    ok((await asked([`{"id":$ID,"analysis":${LETS_ALL_PASS}}`])).ok);
    // An answer longer than tern reads is not held, nor taken.
    const padded = `{"id":$ID,"pad":"$PAD","analysis":${LETS_ALL_PASS}}`;
    const long = await asked([padded]);
    ok(!long.ok, "a 20 MB answer was taken");
    match(long.error, /^Cannot parse shell command: the shell parser process ended/);
  } finally {
    await parser.close();
  }
  equal(childrenRunning("eval").length, 0);
});

Deno.test("a command whose analysis is too long to send is refused, and the next parses", async () => {
  const parser = new ShellParserProcess();
  try {
    // Each command's text holds the ones nested in it: 10 KB, 1,000 deep, is a 12 MB analysis.
    let nested = "echo x";
    for (let depth = 0; depth < 1_000; depth++) nested = `echo "$(${nested})"`;
    const refused = await parser.analyze(nested, 5_000);
    ok(!refused.ok, "a 12 MB analysis was sent");
    match(
      refused.error,
      /^Cannot parse shell command: its analysis takes \d+ MB, more than the 8 MB allowed; split it/,
    );
    // Deeper still, the walk runs out of stack: refused too, saying why.
    let deeper = nested;
    for (let depth = 0; depth < 4_000; depth++) deeper = `echo "$(${deeper})"`;
    const tooDeep = await parser.analyze(deeper, 5_000);
    ok(!tooDeep.ok);
    match(tooDeep.error, /^Cannot parse shell command: it is nested too deeply to analyse/);
    // Below the limit, a long answer comes whole, in as many writes as it takes.
    const loop = "for f in a; do " +
      Array.from({ length: 2_000 }, (_, i) => `a${i}=$(echo ${"y".repeat(50)})`).join(" ") +
      " :; done";
    deepEqual(await parser.analyze(loop, 5_000), await analyzeShellHere(loop));
  } finally {
    await parser.close();
  }
});

Deno.test("a command longer than the shell parser takes is refused before any process starts", async () => {
  const parser = new ShellParserProcess();
  try {
    const refused = await parser.analyze(`echo ${"a".repeat(4 * 1024 * 1024)}`, 5_000);
    ok(!refused.ok);
    match(
      refused.error,
      /^Cannot parse shell command: it is 4194309 characters long, more than the 4194304 the shell parser takes; split it/,
    );
    equal(childrenRunning("parser_main").length, 0, "a process was started for it");
  } finally {
    await parser.close();
  }
});

Deno.test("the shell parser process reads NUL, lone surrogates, CR and line separators as this process does", async () => {
  const parser = new ShellParserProcess();
  try {
    const odd = [
      "for f in a; do echo a\0b; done",
      "for f in a; do echo \ud800x; done",
      "for f in a; do echo \udc00 \ud83d\ude00; done",
      "for f in a; do echo a\\\r\nrm x; done",
      "for f in a; do echo \u2028\u2029 \u0085; done",
      '{"id":1,"analysis":{"ok":true}}\n{"ready":true}',
      "\n\n\n",
      "",
    ];
    for (const command of odd) {
      deepEqual(
        await parser.analyze(command, 5_000),
        await analyzeShellHere(command),
        JSON.stringify(command),
      );
    }
    equal(childrenRunning("parser_main").length, 1, "one process answers them all");
  } finally {
    await parser.close();
  }
});

Deno.test("the shell parser process has no secret in its environment and no access in its arguments", async () => {
  const parser = new ShellParserProcess();
  try {
    ok((await parser.analyze("for f in a; do :; done", 5_000)).ok);
    const [pid] = childrenRunning("parser_main");
    const proc = (file: string) =>
      new TextDecoder().decode(
        new Deno.Command("cat", { args: [`/proc/${pid}/${file}`] }).outputSync().stdout,
      ).split("\0").filter(Boolean);
    const environ = proc("environ");
    deepEqual(
      environ.map((entry) => entry.slice(0, entry.indexOf("="))).sort(),
      ["DENO_DIR", "DENO_NO_PACKAGE_JSON", "DENO_NO_UPDATE_CHECK", "NO_COLOR"].filter((name) =>
        name !== "DENO_DIR" || Deno.env.get("DENO_DIR")
      ),
    );
    const args = proc("cmdline");
    const access = args.filter((arg) => arg.startsWith("--allow") || arg === "-A");
    deepEqual(access.map((arg) => arg.replace(/=.*/, "")), ["--allow-read"]);
    ok(access[0].endsWith("/node_modules"), access[0]);
  } finally {
    await parser.close();
  }
});
