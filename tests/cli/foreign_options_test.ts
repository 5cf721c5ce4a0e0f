/** Every command refuses the options of other commands, naming the command that takes them. */
import { equal, match, throws } from "node:assert/strict";
import { parseCommandLine } from "../../src/cli/args.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("parseCommandLine() refuses another command's option, naming who takes it", () => {
  const cases: [string[], RegExp][] = [
    [["run", "x", "--json"], /--json belongs to tern audit, .*sessions, not tern run/],
    [["run", "x", "--yes"], /--yes belongs to tern sessions rewind, not tern run/],
    [["run", "x", "--focus", "a"], /--focus belongs to tern sessions compact, not tern run/],
    [["run", "x", "--global"], /--global belongs to tern memory save, not tern run/],
    [["run", "x", "--restore", "files"], /--restore belongs to tern sessions rewind/],
    [["run", "x", "--conflicts", "keep"], /--conflicts belongs to tern sessions rewind/],
    [["run", "x", "--all"], /--all belongs to tern models and sessions list, not tern run/],
    [["run", "x", "--offline"], /--offline belongs to tern models, not tern run/],
    [["-p", "x", "--yes"], /--yes belongs to tern sessions rewind, not tern run/],
    [["plan", "x", "--json"], /--json belongs to .*, not tern plan/],
    [
      ["sessions", "show", "a", "--yes"],
      /--yes belongs to tern sessions rewind, not tern sessions show/,
    ],
    [["sessions", "show", "a", "--all"], /--all belongs to .*, not tern sessions show/],
    [["memory", "list", "--global"], /--global belongs to tern memory save, not tern memory list/],
    [["doctor", "--offline"], /--offline belongs to tern models, not tern doctor/],
    [["--json"], /--json belongs to .*, not an interactive session/],
    [["config", "--image", "a.png"], /--image belongs to tern run, not tern config/],
  ];
  for (const [args, message] of cases) throws(() => parseCommandLine(args), message);
});

Deno.test("parseCommandLine() keeps each command's own options", () => {
  const list = parseCommandLine(["sessions", "list", "--all", "--json"]);
  equal(list.command === "sessions" && list.all && list.json, true);
  const rewind = parseCommandLine(["sessions", "rewind", "s", "e", "--yes", "--restore", "files"]);
  equal(rewind.command === "sessions" && rewind.rewind?.yes, true);
  const models = parseCommandLine(["models", "--all", "--offline", "--json"]);
  equal(models.command === "models" && models.offline, true);
  const save = parseCommandLine(["memory", "save", "a fact", "--global"]);
  equal(save.command === "memory" && save.global, true);
});

Deno.test("parseCommandLine() says how to give a template an argument that looks like an option", () => {
  throws(
    () => parseCommandLine(["run", "/rev", "a", "--focus=x"]),
    /--focus belongs to tern sessions compact, not tern run; .*after "--": tern run \/rev -- <arguments>/,
  );
  const line = parseCommandLine(["run", "/rev", "--", "a", "--focus=x"]);
  equal(line.command === "run" && line.task, "/rev a --focus=x");
});

Deno.test("tern run with another command's option exits 2 and names the option", async () => {
  const ws = await tempWorkspace();
  try {
    const { code, stderr } = await runTern(["run", "hello", "--yes"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: `${ws.home}/.tern` },
    });
    equal(code, 2);
    match(stderr, /--yes belongs to tern sessions rewind, not tern run/);
  } finally {
    await ws.cleanup();
  }
});
