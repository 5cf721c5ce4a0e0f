/**
 * A new user's typos: a mistyped command, option or help topic is answered with the one meant,
 * not only with "unknown" (or, for a command, with how to run it as a task).
 */
import { equal, match, ok, throws } from "node:assert/strict";
import { parseCommandLine } from "../../src/cli/args.ts";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { UsageError } from "../../src/cli/errors.ts";

function usageMessage(args: string[]): string {
  let message = "";
  throws(() => parseCommandLine(args), (error) => {
    ok(error instanceof UsageError, String(error));
    equal(exitCodeForError(error), 2);
    message = (error as Error).message;
    return true;
  });
  return message;
}

Deno.test("a mistyped command is answered with the command meant, and how to run a task", () => {
  const cases: [string[], string][] = [
    [["conifg"], "config"],
    [["rnu", "fix", "it"], "run"],
    [["confg"], "config"],
    [["sesions", "list"], "sessions"],
    [["docter"], "doctor"],
    [["plans", "x"], "plan"],
  ];
  for (const [args, meant] of cases) {
    const message = usageMessage(args);
    match(message, new RegExp(`did you mean tern ${meant}\\?`), args.join(" "));
    match(message, new RegExp(`tern run "${args[0]} …"`), args.join(" "));
  }
});

Deno.test("a word far from every command gets no guess", () => {
  for (const word of ["hi", "fix", "test", "frobnicate", "chil", "ran"]) {
    const message = usageMessage([word]);
    ok(!message.includes("did you mean"), message);
    match(message, new RegExp(`Unknown command "${word}"`));
  }
});

Deno.test("a mistyped option is answered with the option meant", () => {
  const cases: [string[], string][] = [
    [["--mdoe", "ask"], "--mode"],
    [["run", "x", "--mdoe=ask"], "--mode"],
    [["run", "x", "--modle", "m"], "--model"],
    [["--helpp"], "--help"],
    [["run", "x", "--thinkng", "low"], "--thinking"],
    [["run", "x", "--base-ulr", "http://127.0.0.1:1/v1"], "--base-url"],
  ];
  for (const [args, meant] of cases) {
    match(usageMessage(args), new RegExp(`Unknown option "[^"]+": did you mean ${meant}\\?`));
  }
  ok(!usageMessage(["run", "x", "--verbose"]).includes("did you mean"));
  ok(!usageMessage(["-Z"]).includes("did you mean"));
});

Deno.test("help for a mistyped command names the command meant", () => {
  match(usageMessage(["help", "sandbx"]), /No help for "sandbx".*did you mean sandbox\?/);
  match(usageMessage(["conifg", "--help"]), /did you mean config\?/);
});

Deno.test('a task of "-" is refused: the task is not read from stdin', () => {
  for (const args of [["run", "-"], ["-p", "-"], ["--once=-"], ["plan", "-"], ["--plan", " - "]]) {
    match(usageMessage(args), /The task is "-": the task is not read from stdin \(tern with no/);
    match(usageMessage(args), /"\$\(cat task\.md\)"/);
  }
  match(usageMessage(["run"]), /The task is empty: .*"\$\(cat task\.md\)"/);
  equal(parseCommandLine(["run", "-", "x"]).command, "run");
});

Deno.test("tern run -r with only a task says the task was taken as the session's id", () => {
  match(
    usageMessage(["run", "-r", "fix the bug"]),
    /The task is empty: --resume took "fix the bug" as the session's id; give the task after it/,
  );
  match(usageMessage(["run", "-r"]), /The task is empty: say what tern should do/);
  equal(parseCommandLine(["run", "-r", "abc", "fix it"]).command, "run");
});
