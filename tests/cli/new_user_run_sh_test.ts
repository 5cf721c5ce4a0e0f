/**
 * `./run.sh` as a new user types it: a tern command after it (`./run.sh run "task"`,
 * `./run.sh doctor`) is tern's, in the folder it was started in, not a Deno task that is not
 * found; deno.json's own tasks still go to Deno.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../support/tern_process.ts";

const decoder = new TextDecoder();

async function runSh(args: string[], cwd: string, home: string): Promise<Deno.CommandOutput> {
  return await new Deno.Command(join(ROOT, "run.sh"), {
    args,
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
}

Deno.test("./run.sh with a tern command runs tern in the current folder, with tern's errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tern-run-sh-" });
  try {
    const home = join(dir, "home");
    const project = join(dir, "project");
    await Deno.mkdir(home);
    await Deno.mkdir(join(project, ".tern"), { recursive: true });
    await Deno.writeTextFile(join(project, ".tern", "config.jsonc"), '{ "model": "here" }\n');
    const config = await runSh(["config"], project, home);
    equal(config.code, 0, decoder.decode(config.stderr));
    match(decoder.decode(config.stdout), /^model +here +\(project config/m);
    const empty = await runSh(["run"], project, home);
    equal(empty.code, 2, decoder.decode(empty.stderr));
    match(decoder.decode(empty.stderr), /^tern: The task is empty/m);
    const typo = await runSh(["demoo"], project, home);
    equal(typo.code, 2);
    match(decoder.decode(typo.stderr), /Unknown command "demoo": did you mean tern demo\?/);
    ok(!decoder.decode(typo.stderr).includes("Task not found"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("./run.sh sends every task of deno.json, and only those, to Deno", async () => {
  const tasks = Object.keys(JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks);
  const script = await Deno.readTextFile(join(ROOT, "run.sh"));
  const listed = /^ {2}(demo \|[^)]*)\) ;;$/m.exec(script);
  ok(listed, "run.sh's list of deno.json's tasks");
  deepEqual(listed[1].split("|").map((word) => word.trim()).sort(), tasks.sort());
});
