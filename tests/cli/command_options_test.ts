/**
 * Each command takes only its own options and words: the options many commands take (-C,
 * --output, --raw, the session options, the configuration keys' options) are refused, exit 2,
 * by a command that does not use them, as another command's own options are; and a plan's
 * --concurrency keeps the range of planConcurrency.
 */
import { equal, match, throws } from "node:assert/strict";
import { parseCommandLine } from "../../src/cli/args.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("parseCommandLine() refuses a shared option a command does not use, naming it", () => {
  const cases: [string[], RegExp][] = [
    [
      ["sessions", "list", "-o", "json"],
      /--output belongs to tern run, plan and sandbox, not tern sessions list; .*with --json/,
    ],
    [["config", "-o", "json"], /--output belongs to tern run, plan and sandbox, not tern config/],
    [["-o", "json"], /--output belongs to .*, not an interactive session/],
    [["rpc", "--raw"], /--raw belongs to tern run, not tern rpc/],
    [["doctor", "--raw"], /--raw belongs to tern run, not tern doctor/],
    [["demo", "-m", "x"], /--model does not apply to tern demo/],
    [["--demo", "-C", "/tmp"], /--cwd does not apply to tern demo/],
    [["completions", "bash", "-m", "x"], /--model does not apply to tern completions/],
    [["completions", "bash", "-C", "/tmp"], /--cwd does not apply to tern completions/],
    [["acp", "-C", "/tmp"], /--cwd does not apply to tern acp/],
    [["sessions", "list", "-c"], /--continue does not apply to tern sessions list/],
    [["audit", "-c"], /--continue does not apply to tern audit/],
    [["sessions", "show", "abc", "-r", "x"], /--resume belongs to .*, not tern sessions show/],
    [["plan", "x", "--from", "e1"], /--from belongs to tern run and rpc and to interactive/],
    [["run", "x", "--plan", "y"], /--plan belongs to tern plan, not tern run/],
    [["--version", "-m", "x"], /--model does not apply to tern --version/],
  ];
  for (const [args, message] of cases) {
    throws(() => parseCommandLine(args), message, args.join(" "));
  }
});

Deno.test("parseCommandLine() keeps shared options where they are used", () => {
  const run = parseCommandLine(["run", "x", "-C", "/w", "-m", "m", "-o", "json", "--raw", "-c"]);
  equal(run.command === "run" && run.options.raw && run.options.cwd, "/w");
  const plan = parseCommandLine(["plan", "-c", "-o", "stream-json", "--concurrency", "16"]);
  equal(plan.command === "plan" && plan.concurrency, 16);
  const explain = parseCommandLine(["sandbox", "explain", "-o", "json", "-s", ":read-only"]);
  equal(explain.command === "sandbox-explain" && explain.options.output, "json");
  const rpc = parseCommandLine(["rpc", "-r", "abc", "--from", "e1", "-m", "m"]);
  equal(rpc.command === "rpc" && rpc.options.from, "e1");
  equal(parseCommandLine(["-c", "--from", "e1"]).command, "interactive");
  equal(parseCommandLine(["acp", "--mode", "ask"]).command, "acp");
  // A subagent's process is given its parent's base URL.
  equal(parseCommandLine(["child", "--base-url", "http://127.0.0.1:1/v1"]).command, "child");
  equal(parseCommandLine(["config", "-C", "/w", "--max-rounds", "3"]).command, "config");
});

Deno.test("parseCommandLine() refuses words after --version and after help <command>", () => {
  throws(() => parseCommandLine(["--version", "extra"]), /Unexpected arguments besides --version/);
  throws(() => parseCommandLine(["run", "x", "-V"]), /Unexpected arguments besides --version/);
  throws(() => parseCommandLine(["help", "run", "extra"]), /after help run: "extra"/);
  equal(parseCommandLine(["--version"]).command, "version");
  // `--help` added to a whole command line shows that command's help.
  const help = parseCommandLine(["run", "fix", "it", "--help"]);
  equal(help.command === "help" && help.topic, "run");
});

Deno.test("parseCommandLine() gives --concurrency planConcurrency's range and words", () => {
  for (const value of ["17", "99999", "0", "abc", "2.5"]) {
    throws(
      () => parseCommandLine(["plan", "--concurrency", value, "x"]),
      new RegExp(
        `Invalid --concurrency "${value}": expected an integer from 1 to 16 \\(plan nodes run`,
      ),
    );
  }
  const one = parseCommandLine(["plan", "--concurrency", "1", "x"]);
  equal(one.command === "plan" && one.concurrency, 1);
});

Deno.test("parseCommandLine() reads sessions fork -c <entry> as the newest session's entry", () => {
  const fork = parseCommandLine(["sessions", "fork", "-c", "e1"]);
  equal(fork.command === "sessions" && fork.session, undefined);
  equal(fork.command === "sessions" && fork.entry, "e1");
  const leaf = parseCommandLine(["sessions", "fork", "-c"]);
  equal(leaf.command === "sessions" && leaf.entry, undefined);
  throws(
    () => parseCommandLine(["sessions", "fork", "-c", "e1", "e2"]),
    /after sessions fork: "e2"/,
  );
  throws(() => parseCommandLine(["sessions", "rewind", "-c", "e1", "e2"]), /rewind: "e2"/);
});

Deno.test("tern refuses an option or word its command does not take, with exit 2", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const cases: [string[], RegExp][] = [
      [["sessions", "list", "-o", "json"], /--output belongs to .*not tern sessions list/],
      [["config", "-o", "json"], /--output belongs to .*not tern config/],
      [["demo", "-m", "x"], /--model does not apply to tern demo/],
      [["completions", "bash", "-m", "x"], /--model does not apply to tern completions/],
      [["doctor", "--raw"], /--raw belongs to tern run, not tern doctor/],
      [["--version", "extra"], /Unexpected arguments besides --version: "extra"/],
      [["help", "run", "extra"], /Unexpected arguments after help run: "extra"/],
      [["plan", "--concurrency", "99999", "x"], /expected an integer from 1 to 16/],
    ];
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await runTern(args, { cwd: ws.dir, env });
      equal(code, 2, `${args.join(" ")}: ${stdout}${stderr}`);
      match(stderr, message);
      equal(stdout, "", args.join(" "));
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("README's command table lists only commands tern --help describes", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const named = [...readme.matchAll(/^\| `tern ([a-z]+)/gm)].map((match) => match[1]);
  equal(named.length > 10, true, "the table was found");
  for (const command of new Set(named)) {
    const line = parseCommandLine(["help", command]);
    equal(line.command === "help" && line.topic, command);
  }
});

Deno.test("tern acp refuses a bad option's value before it serves, exit 2", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["acp", "--mode", "weird"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 2, run.stderr);
    match(run.stderr, /Invalid command-line option --mode: .*expected "ask", "auto" or "bypass"/);
  } finally {
    await ws.cleanup();
  }
});
