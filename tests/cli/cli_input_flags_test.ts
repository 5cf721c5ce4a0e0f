/**
 * An option of one value given twice with different values is refused (exit 2) instead of the
 * last silently winning: `tern run -o json … -o text` would print text to a script that asked
 * for JSON. The values are never quoted back, since one may hold a key.
 */
import { equal, match, ok, throws } from "node:assert/strict";
import { parseCommandLine } from "../../src/cli/args.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("parseCommandLine() refuses an option given twice with different values", () => {
  const cases: [string[], RegExp][] = [
    [["run", "-o", "json", "x", "-o", "text"], /Option --output is given twice .*\(as "-o"\)/],
    [["run", "--model", "a", "-m", "b", "x"], /--model .*\(as "--model" and "-m"\)/],
    [["run", "--max-rounds=3", "--max-rounds", "4", "x"], /Option --max-rounds is given twice/],
    [["-r", "a", "--resume", "b"], /Option --resume is given twice/],
    [["plan", "--concurrency", "2", "--concurrency=3", "x"], /Option --concurrency is given/],
  ];
  for (const [args, message] of cases) {
    throws(() => parseCommandLine(args), message, args.join(" "));
  }
});

Deno.test("parseCommandLine() takes an option repeated with the same value, and lists", () => {
  const run = parseCommandLine([
    "run",
    "-o",
    "json",
    "--output=json",
    "-m",
    "m",
    "--model",
    "m",
    "x",
  ]);
  equal(run.command === "run" && run.options.output, "json");
  const images = parseCommandLine(["run", "--image", "a.png", "--image", "b.png", "x"]);
  equal(images.command === "run" && images.images?.length, 2);
  // After "--" the words are the task's.
  const task = parseCommandLine(["run", "-m", "a", "--", "-m", "b"]);
  equal(task.command === "run" && task.task, "-m b");
});

Deno.test("tern run with --base-url twice exits 2 and never prints either URL's credentials", async () => {
  const ws = await tempWorkspace();
  try {
    const secret = "sk-proj-SECRETabcdef1234567890XYZ";
    const run = await runTern([
      "run",
      "--base-url",
      `http://user:${secret}@127.0.0.1:9/v1`,
      "--base-url",
      "http://127.0.0.1:9/v1",
      "hi",
    ], { cwd: ws.dir, env: { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" } });
    equal(run.code, 2, run.stderr);
    match(run.stderr, /Option --base-url is given twice with different values/);
    ok(!(run.stdout + run.stderr).includes("SECRET"), run.stderr);
    equal(run.stdout, "");
  } finally {
    await ws.cleanup();
  }
});
