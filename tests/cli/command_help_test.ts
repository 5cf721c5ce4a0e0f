/** `tern <command> --help`, the commands in `tern --help`, and what completion offers as values. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { completionScript } from "../../src/cli/completions.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { bashComplete } from "../support/bash_complete.ts";

Deno.test("tern --help lists completions and not the internal child command", async () => {
  const ws = await tempWorkspace();
  try {
    const help = await runTern(["--help"], { cwd: ws.dir });
    match(help.stdout, /^ {2}completions <shell> +print the completion script/m);
    equal(/^ {2}child\b/m.test(help.stdout), false);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern <command> --help and tern help <command> print that command's part only", async () => {
  const ws = await tempWorkspace();
  try {
    const run = await runTern(["run", "--help"], { cwd: ws.dir });
    equal(run.code, 0, run.stderr);
    ok(run.stdout.split("\n").length < 20, run.stdout);
    match(run.stdout, /^Usage of tern run/);
    match(run.stdout, /^ {2}run <task\.\.\.> +run one task/m);
    match(run.stdout, /^ {2}run \/name \[args\]/m);
    match(run.stdout, /--image <file>/);
    equal(run.stdout.includes("sessions list"), false);
    const sessions = await runTern(["help", "sessions"], { cwd: ws.dir });
    equal(sessions.code, 0, sessions.stderr);
    match(sessions.stdout, /^ {2}sessions rewind <id> <entry\|undo>/m);
    equal(sessions.stdout.includes("mcp list"), false);
    const whole = await runTern(["help"], { cwd: ws.dir });
    ok(whole.stdout.split("\n").length > 100);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern completions without a shell says which shells there are and how to call it", async () => {
  const ws = await tempWorkspace();
  try {
    const none = await runTern(["completions"], { cwd: ws.dir });
    equal(none.code, 2);
    match(none.stderr, /Missing shell for completions: tern completions bash, zsh or fish/);
    equal(none.stderr.includes('""'), false);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("completionScript('bash') offers the values of --mode, --thinking, --profile, --provider and the shells", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-completion-" });
  try {
    // A file that file-name completion would offer.
    await Deno.writeTextFile(join(dir, "afile"), "");
    const script = join(dir, "tern.bash");
    await Deno.writeTextFile(script, completionScript("bash"));
    const offered = (typed: string[]) => bashComplete(script, ["tern", ...typed]);
    deepEqual(await offered(["--mode", ""]), ["ask", "auto", "bypass"]);
    deepEqual(await offered(["--thinking", ""]), ["high", "low", "medium", "off"]);
    deepEqual(await offered(["-s", ""]), [
      ":danger-full-access",
      ":external",
      ":read-only",
      ":workspace",
    ]);
    deepEqual(await offered(["--provider", "o"]), [
      "ollama",
      "openai",
      "openai-responses",
      "openrouter",
    ]);
    deepEqual(await offered(["completions", ""]), ["bash", "fish", "zsh"]);
    deepEqual(await offered(["compl"]), ["completions"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
