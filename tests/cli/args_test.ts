import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { parseCommandLine } from "../../src/cli/args.ts";
import { UsageError } from "../../src/cli/errors.ts";

Deno.test("parseCommandLine() reads run, -p and --once with their options", () => {
  deepEqual(parseCommandLine(["run", "fix", "the", "bug", "-m", "m1", "--max-rounds", "4"]), {
    command: "run",
    task: "fix the bug",
    options: {
      cwd: undefined,
      // As given: the values are checked once, when the configuration loads.
      settings: { model: "m1", maxRounds: "4" },
      output: "text",
      raw: undefined,
      continue: undefined,
      resume: undefined,
      from: undefined,
    },
  });
  const once = parseCommandLine(["-p", "do it", "-o", "json", "--base-url", "http://x/v1"]);
  equal(once.command, "run");
  if (once.command !== "run") return;
  equal(once.task, "do it");
  equal(once.options.output, "json");
  equal(once.options.settings.baseUrl, "http://x/v1");
  equal(parseCommandLine(["--once", "x", "--temperature", "0.5"]).command, "run");
});

Deno.test("parseCommandLine() reads run --skill (the skill alone is a task) and context", () => {
  const line = parseCommandLine(["run", "--skill", "pdf", "fill", "it"]);
  deepEqual(line.command === "run" && [line.task, line.skill], ["fill it", "pdf"]);
  const alone = parseCommandLine(["run", "--skill", "pdf"]);
  deepEqual(alone.command === "run" && [alone.task, alone.skill], ["", "pdf"]);
  const context = parseCommandLine(["context", "--json"]);
  deepEqual(context.command === "context" && context.json, true);
  throws(() => parseCommandLine(["context", "--skill", "pdf"]), /--skill belongs to tern run/);
  const asked = parseCommandLine(["context", "fix", "auth"]);
  deepEqual(asked.command === "context" && asked.task, "fix auth");
  throws(
    () => parseCommandLine(["memory", "list", "--global"]),
    /--global belongs to tern memory save/,
  );
  throws(() => parseCommandLine(["memory", "drop"]), /Unknown memory subcommand "drop"/);
});

Deno.test("parseCommandLine() passes --provider, --thinking and --fallback on as given", () => {
  const line = parseCommandLine([
    "run",
    "x",
    "--provider",
    "anthropic",
    "--thinking",
    "high",
    "--fallback",
    "openai/gpt-5, ollama/qwen3-coder,",
  ]);
  if (line.command !== "run") throw new Error("expected run");
  deepEqual(line.options.settings, {
    provider: "anthropic",
    thinking: "high",
    fallback: "openai/gpt-5, ollama/qwen3-coder,",
  });
  const models = parseCommandLine(["models", "--offline", "--all", "--json"]);
  if (models.command !== "models") throw new Error("expected models");
  deepEqual([models.all, models.json, models.offline], [true, true, true]);
  throws(() => parseCommandLine(["models", "extra"]), /Unexpected arguments after models/);
});

Deno.test("parseCommandLine() reads demo, config, help and version", () => {
  equal(parseCommandLine(["demo"]).command, "demo");
  equal(parseCommandLine(["--demo"]).command, "demo");
  equal(parseCommandLine(["config", "-C", "/tmp"]).command, "config");
  equal(parseCommandLine(["--help"]).command, "help");
  equal(parseCommandLine(["help"]).command, "help");
  equal(parseCommandLine(["-V"]).command, "version");
  equal(parseCommandLine([]).command, "interactive");
});

/** Each command line throws a UsageError (exit code 2) whose message matches. */
function throwsUsage(cases: [string[], RegExp][]): void {
  for (const [args, message] of cases) {
    throws(() => parseCommandLine(args), (error: unknown) => {
      equal(error instanceof UsageError, true, args.join(" "));
      equal(exitCodeForError(error), 2);
      return message.test((error as Error).message);
    }, args.join(" "));
  }
}

Deno.test("parseCommandLine() rejects bad usage with a UsageError naming the problem", () => {
  const cases: [string[], RegExp][] = [
    [["--nope"], /Unknown option "--nope"/],
    [["run"], /task is empty/],
    [["run", "  "], /task is empty/],
    [["run", "x", "-o", "xml"], /--output "xml"/],
    [["frobnicate"], /Unknown command "frobnicate"/],
    [["-p", "x", "extra"], /besides --once/],
    [["demo", "now"], /after demo/],
    [["-m"], /argument missing|requires|expected/i],
    [["help", "nope"], /No help for "nope": it is not a tern command \(tern --help lists them\)/],
    [["nope", "--help"], /No help for "nope"/],
    [["help", "child"], /No help for "child"/],
  ];
  throwsUsage(cases);
});

Deno.test("parseCommandLine() names the option at fault and how to give it", () => {
  const cases: [string[], RegExp][] = [
    [["run", "x", "--raw=false"], /Option "--raw" takes no value: give --raw alone/],
    [["-Z"], /Unknown option "-Z"/],
    [["run", "x", "--model"], /Option "--model" requires a value: --model <value>/],
    // A value that looks like an option is refused, with the way to give one.
    [["run", "x", "-m", "-x"], /Option "-m" requires a value.*--model=<value>/],
    [["run", "x", "-mc", "gpt"], /Option "-m" requires a value: give it as the next word/],
  ];
  throwsUsage(cases);
  const line = parseCommandLine([
    "run",
    "--model=-odd",
    "--image",
    "a.png",
    "fix",
    "--image=b.png",
    "--",
    "--raw",
  ]);
  if (line.command !== "run") throw new Error(`expected run, got ${line.command}`);
  equal(line.options.settings.model, "-odd");
  equal(line.images?.join(","), "a.png,b.png");
  // After `--` every word is the task's, options included.
  equal(line.task, "fix --raw");
  equal(line.options.raw, undefined);
});

Deno.test("parseCommandLine() reads --continue, --resume (with and without an id) and --from", () => {
  const line = parseCommandLine(["run", "-c", "go on"]);
  equal(line.command === "run" && line.options.continue, true);
  const resumed = parseCommandLine(["run", "-r", "ab12", "--from", "e1", "go"]);
  equal(resumed.command === "run" && resumed.options.resume, "ab12");
  equal(resumed.command === "run" && resumed.options.from, "e1");
  const bare = parseCommandLine(["run", "go", "--resume"]);
  equal(bare.command === "run" && bare.options.resume, "");
  const beforeOption = parseCommandLine(["--resume", "-m", "x", "run", "go"]);
  equal(beforeOption.command === "run" && beforeOption.options.resume, "");
  // After "--" nothing is rewritten.
  const check = parseCommandLine(["sandbox", "check", "--", "tern", "--resume"]);
  equal(check.command === "sandbox-check" && check.call, "tern --resume");
});

Deno.test("parseCommandLine() reads the sessions subcommands and rejects bad ones", () => {
  deepEqual(parseCommandLine(["sessions"]), {
    command: "sessions",
    action: "list",
    session: undefined,
    entry: undefined,
    all: false,
    json: false,
    focus: undefined,
    options: parseCommandLine(["run", "x"]).command === "run"
      ? (parseCommandLine(["run", "x"]) as { options: unknown }).options
      : undefined,
  });
  const fork = parseCommandLine(["sessions", "fork", "abcd", "e1"]);
  equal(fork.command === "sessions" && fork.entry, "e1");
  const compact = parseCommandLine(["sessions", "compact", "abcd", "--focus", "tests"]);
  equal(compact.command === "sessions" && compact.focus, "tests");
  throws(() => parseCommandLine(["sessions", "show"]), /Missing session for "sessions show"/);
  throws(() => parseCommandLine(["sessions", "prune"]), /Unknown sessions subcommand "prune"/);
  throws(() => parseCommandLine(["sessions", "show", "a", "b"]), /Unexpected arguments/);
});

Deno.test("parseCommandLine() reads tern plan, --plan and refuses plan flags elsewhere", () => {
  const plan = parseCommandLine(["plan", "do", "it", "--concurrency", "3"]);
  equal(plan.command, "plan");
  if (plan.command === "plan") {
    equal(plan.task, "do it");
    equal(plan.concurrency, 3);
  }
  const alias = parseCommandLine(["--plan", "do it"]);
  equal(alias.command === "plan" && alias.task, "do it");
  const resume = parseCommandLine(["plan", "-c", "--append", "{}"]);
  equal(resume.command === "plan" && resume.task, undefined);
  throws(
    () => parseCommandLine(["run", "x", "--concurrency", "2"]),
    /--concurrency belongs to tern plan, not tern run/,
  );
  throws(() => parseCommandLine(["plan", "x", "--concurrency", "0"]), /an integer from 1 to 16/);
});

Deno.test("parseCommandLine() reads index and search with their options", () => {
  const index = parseCommandLine(["index", "sub"]);
  equal(index.command, "index");
  equal(index.command === "index" && index.path, "sub");
  const search = parseCommandLine(["search", "parse", "args", "--limit", "3", "--json"]);
  ok(search.command === "search");
  equal(search.query, "parse args");
  equal(search.limit, 3);
  equal(search.json, true);
  equal(search.explain, false);
  const explained = parseCommandLine(["search", "x", "--explain"]);
  equal(explained.command === "search" && explained.explain, true);
  throws(() => parseCommandLine(["run", "x", "--explain"]), /--explain belongs to tern search/);
  throws(() => parseCommandLine(["search"]), /The query is empty/);
  throws(() => parseCommandLine(["search", "x", "--limit", "0"]), /Invalid --limit "0"/);
  throws(() => parseCommandLine(["index", "a", "b"]), /Unexpected arguments after index: "b"/);
  throws(() => parseCommandLine(["run", "x", "--limit", "2"]), /--limit belongs to tern search/);
});

Deno.test("parseCommandLine() reads rpc and acp with the turn options, and nothing after them", () => {
  const rpc = parseCommandLine(["rpc", "-m", "x", "--mode", "ask"]);
  equal(rpc.command, "rpc");
  equal(rpc.command === "rpc" && rpc.options.settings.model, "x");
  equal(parseCommandLine(["acp"]).command, "acp");
  throws(() => parseCommandLine(["acp", "now"]), /Unexpected arguments after acp: "now"/);
});
