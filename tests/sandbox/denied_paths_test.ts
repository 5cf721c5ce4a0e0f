/**
 * The person's deny rules with a path hold for commands and the tool worker's folder-wide tools
 * too: what they keep from the reading tools is hidden from the view, what they keep from the
 * writing tools is read-only. Real bubblewrap, real worker, real files.
 */
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { findDeniedPaths, pathDenials } from "../../src/sandbox/denied_paths.ts";
import { SandboxViewError } from "../../src/sandbox/protected_paths.ts";
import { BUILTIN_MANIFEST } from "../../src/tools/mod.ts";
import type { SandboxRuntime } from "../../src/sandbox/runtime.ts";
import { bwrapTest, withTestSandbox } from "./_bwrap_helpers.ts";

const SECRET = "TOPSECRET-4711";

const RULES: PermissionRule[] = [
  { action: "deny", path: "secrets/**" },
  { action: "deny", tool: "read", path: "**/.env" },
  { action: "deny", tool: "write", path: "package.json" },
  // Not held by the view: an ask rule, and a rule for bash by its words.
  { action: "ask", path: "notes/**" },
  { action: "deny", command: "git push", path: "open/**" },
];

const FILES: Record<string, string> = {
  "secrets/key.txt": `${SECRET}\n`,
  "secrets/deep/more.txt": `${SECRET}\n`,
  "app/.env": `TOKEN=${SECRET}\n`,
  "package.json": '{"name": "x"}\n',
  "notes/a.md": "notes\n",
  "open/readme.md": "open\n",
  "src/main.ts": "console.log(1);\n",
};

Deno.test("pathDenials() takes deny rules with a path, by what their tool covers", async () => {
  const denials = await pathDenials(RULES, BUILTIN_MANIFEST);
  ok(denials !== null);
  equal(denials.hide("secrets/key.txt"), true);
  equal(denials.hide("app/.env"), true);
  equal(denials.hide("package.json"), false);
  equal(denials.protect("package.json"), true);
  // What is hidden is protected too.
  equal(denials.protect("secrets/key.txt"), true);
  // ask rules and command rules are decided per call only.
  equal(denials.hide("notes/a.md") || denials.protect("notes/a.md"), false);
  equal(denials.hide("open/readme.md") || denials.protect("open/readme.md"), false);
  const none = [{ action: "ask", path: "x" }, { action: "deny", tool: "bash", path: "x" }] as const;
  equal(await pathDenials(none, BUILTIN_MANIFEST), null);
  // An MCP tool's rule is decided per call: no built-in tool is named.
  equal(
    await pathDenials([{ action: "deny", tool: "mcp__fs__read", path: "x" }], BUILTIN_MANIFEST),
    null,
  );
});

Deno.test("findDeniedPaths() hides a folder whose every path matches whole, else each match", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    for (
      const [path, content] of Object.entries({ ...FILES, "keys/a.pem": "k", "keys/b.txt": "b" })
    ) {
      await Deno.mkdir(join(ws, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(ws, path), content);
    }
    await Deno.mkdir(join(ws, ".git/secrets"), { recursive: true });
    await Deno.symlink(join(ws, "src"), join(ws, "secrets-link"));
    await Deno.symlink("/", join(ws, "root.pem"));
    await Deno.symlink("/etc/hostname", join(ws, "host.pem"));
    await Deno.symlink("/etc/hostname", join(ws, "host.json"));
    const denials = await pathDenials([
      ...RULES,
      { action: "deny", path: "keys/*.pem" },
      { action: "deny", path: "secrets-link" },
      { action: "deny", path: "*.pem" },
      { action: "deny", tool: "write", path: "host.json" },
    ], BUILTIN_MANIFEST);
    const found = await findDeniedPaths(ws, denials!);
    deepEqual(found.hidden.sort(), [
      join(ws, "app/.env"),
      join(ws, "keys/a.pem"),
      join(ws, "secrets"),
      // A matching link counts by where it leads inside the workspace (here `src`); a link
      // out of the workspace (to `/`, to a host file) is left alone.
      join(ws, "src"),
    ]);
    deepEqual(found.readOnly, [join(ws, "package.json")]);
    equal(found.complete, true);
    // A budget too small for the tree says so, and hides every folder it did not list.
    const cut = await findDeniedPaths(ws, denials!, { maxEntries: 3 });
    equal(cut.complete, false);
    for (const folder of ["app", "keys", "notes", "open"]) {
      ok(cut.hidden.includes(join(ws, folder)), `${folder}: ${cut.hidden.join(", ")}`);
    }
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

async function shell(sandbox: SandboxRuntime, ws: string, command: string): Promise<string> {
  return (await sandbox.shell(command, { cwd: ws, timeoutMs: 60_000 })).output;
}

async function tool(sandbox: SandboxRuntime, name: string, args: unknown): Promise<string> {
  const result = await sandbox.worker!.call(name, args, { signal: new AbortController().signal });
  return result.status === "ERROR"
    ? `${result.status} ${result.message}`
    : `${result.status} ${result.output}`;
}

bwrapTest("deny rules with a path hold for commands and folder-wide file tools", async () => {
  await withTestSandbox({ name: "denied", rules: RULES, files: FILES }, async (sandbox, ws) => {
    // Commands: the hidden paths read as empty, cannot be written, cannot be moved away.
    const read = await shell(
      sandbox,
      ws,
      `cat secrets/key.txt app/.env; grep -r "${SECRET}" . ; ls -a secrets; ` +
        "echo x > secrets/new || echo no-write; mv secrets gone || echo no-move; " +
        "echo '{}' > package.json || echo no-package; cat notes/a.md open/readme.md",
    );
    ok(!read.includes(SECRET), read);
    ok(read.includes("no-write") && read.includes("no-move") && read.includes("no-package"), read);
    ok(read.includes("notes") && read.includes("open"), read);
    equal(await Deno.readTextFile(join(ws, "package.json")), FILES["package.json"]);
    equal(await Deno.readTextFile(join(ws, "secrets/key.txt")), FILES["secrets/key.txt"]);
    // A background process sees the same view.
    const control = sandbox.processes.control(false);
    const started = await control.start(`cat secrets/key.txt app/.env; echo bg-done`, { cwd: ws });
    equal(await control.wait(started.id, { timeoutMs: 60_000 }), "exited");
    const logs = control.logs(started.id, { tail: 20 }).lines.join("\n");
    ok(logs.includes("bg-done") && !logs.includes(SECRET), logs);
    // The worker's folder-wide tools search the same view.
    if (sandbox.workerKind === "bwrap") {
      const grep = await tool(sandbox, "grep", { pattern: SECRET, path: "." });
      ok(grep.includes("No matches"), grep);
      const token = await tool(sandbox, "grep", { pattern: "TOKEN", path: "app" });
      ok(token.includes("No matches"), token);
      const listed = await tool(sandbox, "list", { path: "secrets" });
      ok(!listed.includes("key.txt") && !listed.includes("deep"), listed);
      const globbed = await tool(sandbox, "glob", { pattern: "**/*.txt" });
      ok(!globbed.includes("key.txt") && !globbed.includes("more.txt"), globbed);
      ok((await tool(sandbox, "read", { path: "src/main.ts" })).includes("console.log"));
    }
  });
});

bwrapTest(
  "a file a command creates where a deny rule points is hidden from the next call",
  async () => {
    await withTestSandbox(
      { name: "denied-new", rules: RULES, files: FILES },
      async (sandbox, ws) => {
        // The worker starts with the first view.
        if (sandbox.workerKind === "bwrap") {
          ok((await tool(sandbox, "read", { path: "src/main.ts" })).includes("console.log"));
        }
        equal(
          await shell(
            sandbox,
            ws,
            `mkdir -p lib && echo "TOKEN=${SECRET}" > lib/.env && echo made`,
          ),
          "made\n",
        );
        sandbox.shellTreeChanged();
        const after = await shell(sandbox, ws, "cat lib/.env; grep -r TOKEN lib; echo end");
        ok(!after.includes(SECRET), after);
        if (sandbox.workerKind === "bwrap") {
          const output = await tool(sandbox, "grep", { pattern: "TOKEN", path: "." });
          ok(output.includes("No matches"), output);
        }
      },
    );
  },
);

Deno.test("findDeniedPaths() looks inside a nested .git and refuses a name it cannot hide", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    const denials = (await pathDenials([{ action: "deny", path: "**/.env" }], BUILTIN_MANIFEST))!;
    // A command moved a folder holding a secret into a folder named .git.
    await Deno.mkdir(join(ws, "x/.git/app"), { recursive: true });
    await Deno.writeTextFile(join(ws, "x/.git/app/.env"), "S=1\n");
    deepEqual((await findDeniedPaths(ws, denials)).hidden, [join(ws, "x/.git/app/.env")]);
    // A folder whose name is not UTF-8 cannot be named to bubblewrap: the search refuses.
    const made = await new Deno.Command("bash", {
      args: ["-c", `mkdir "$1"/$'bad\\xff' && touch "$1"/$'bad\\xff'/.env`, "x", ws],
    }).output();
    equal(made.success, true);
    await rejects(findDeniedPaths(ws, denials), SandboxViewError);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("findDeniedPaths() lists only the folders the rules can reach", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    for (const path of ["secrets/a/key", "deep/a/b/c/d/.env", "big/x.txt", "cfg/creds.json"]) {
      await Deno.mkdir(join(ws, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(ws, path), "x");
    }
    const denials = (await pathDenials([
      { action: "deny", path: "secrets/**" },
      { action: "deny", path: "cfg/creds.json" },
      { action: "deny", path: "*.pem" },
    ], BUILTIN_MANIFEST))!;
    // A budget of the root's five entries and cfg's one is enough: nothing else is listed.
    const found = await findDeniedPaths(ws, denials, { maxEntries: 6 });
    deepEqual(found.hidden.sort(), [join(ws, "cfg/creds.json"), join(ws, "secrets")]);
    equal(found.complete, true);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("findDeniedPaths() hides what a folder holds from a rule that names the folder, with or without a slash", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    for (const path of ["secrets/key.txt", "keys/deep/id.pem", "open/readme.md"]) {
      await Deno.mkdir(join(ws, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(ws, path), SECRET);
    }
    const denials = (await pathDenials([
      { action: "deny", path: "secrets" },
      { action: "deny", path: "keys/" },
    ], BUILTIN_MANIFEST))!;
    equal(denials.hide("secrets/key.txt"), true);
    equal(denials.hide("keys/deep/id.pem"), true);
    equal(denials.hide("open/readme.md"), false);
    const found = await findDeniedPaths(ws, denials);
    deepEqual(found.hidden.sort(), [join(ws, "keys"), join(ws, "secrets")]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("the searches as another user hide a folder they cannot list, and refuse an unlistable workspace", async () => {
  if (Deno.uid() !== 0) return; // Needs root to run the search as another user.
  // The other user reads the checkout's Deno cache (bin/setup fills it), or the one given.
  const cache = Deno.env.get("DENO_DIR") ??
    new URL("../../.tools/deno", import.meta.url).pathname;
  const denoDir = { DENO_DIR: cache };
  const ws = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern-denied-" }),
  );
  const script = join(ws, "..", `${ws.split("/").at(-1)}-search.ts`);
  try {
    await Deno.mkdir(join(ws, "app/.git"), { recursive: true });
    await Deno.writeTextFile(join(ws, "app/.env"), "S=1\n");
    const module = new URL("../../src/sandbox/denied_paths.ts", import.meta.url).href;
    const git = new URL("../../src/sandbox/protected_paths.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { findDeniedPaths } from "${module}";\n` +
        `import { gitDirsUnder } from "${git}";\n` +
        `const denials = { hide: (p: string) => p.endsWith(".env"), protect: (p: string) => p.endsWith(".env"), ` +
        `reach: [{ base: "", depth: Infinity }] };\n` +
        `const unlistable: string[] = [];\n` +
        `const gitDirs = await gitDirsUnder([Deno.args[0]], { unlistable });\n` +
        `try { console.log(JSON.stringify({ ...await findDeniedPaths(Deno.args[0], denials), gitDirs, unlistable })); }\n` +
        `catch (error) { console.log(JSON.stringify({ error: (error as Error).name, gitDirs, unlistable })); }\n`,
    );
    await new Deno.Command("chown", { args: ["-R", "65534:65534", ws] }).output();
    const search = async () => {
      const out = await new Deno.Command("setpriv", {
        args: [
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          Deno.execPath(),
          "run",
          "-A",
          "--config",
          new URL("../../deno.json", import.meta.url).pathname,
          "--cached-only",
          script,
          ws,
        ],
        env: { ...denoDir, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return new TextDecoder().decode(out.stdout).trim() ||
        new TextDecoder().decode(out.stderr).trim();
    };
    const listed = JSON.parse(await search());
    deepEqual(listed.hidden, [join(ws, "app/.env")]);
    deepEqual(listed.gitDirs, [join(ws, "app/.git")]);
    deepEqual(listed.unlistable, []);
    // A command made a folder unlistable: the deny search hides it whole, the .git search
    // names it (the runtime hides it), where before neither saw what it holds.
    await Deno.chmod(join(ws, "app"), 0o300);
    const hiding = JSON.parse(await search());
    deepEqual(hiding.hidden, [join(ws, "app")]);
    deepEqual(hiding.unlistable, [join(ws, "app")]);
    // The workspace itself unlistable: the rules cannot be held, and the search says so.
    await Deno.chmod(ws, 0o300);
    const refused = JSON.parse(await search());
    equal(refused.error, "SandboxViewError");
    deepEqual(refused.unlistable, [ws]);
  } finally {
    await Deno.chmod(ws, 0o755).catch(() => {});
    await Deno.chmod(join(ws, "app"), 0o755).catch(() => {});
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(script).catch(() => {});
  }
});

bwrapTest("a nested .git that links to a home file is never bound into the view", async () => {
  await withTestSandbox({ name: "gitlink" }, async (sandbox, ws) => {
    // The sandbox's home is the folder holding the workspace: masked but for its allowlist.
    const privateFile = join(ws, "..", "private-notes.txt");
    await Deno.writeTextFile(privateFile, `${SECRET}\n`);
    await Deno.mkdir(join(ws, "x"));
    await Deno.symlink(privateFile, join(ws, "x/.git"));
    sandbox.shellTreeChanged();
    const output = await shell(sandbox, ws, `cat "${privateFile}"; cat x/.git; echo end`);
    ok(!output.includes(SECRET), output);
    ok(output.includes("end"), output);
  });
});

bwrapTest(
  "a matched path swapped for a link after the plan was made binds and hides nothing",
  async () => {
    const rules: PermissionRule[] = [
      { action: "deny", tool: "write", path: "lock.json" },
      { action: "deny", path: ".env" },
    ];
    const files = { "lock.json": "{}\n", ".env": `TOKEN=${SECRET}\n` };
    await withTestSandbox({ name: "swap", rules, files }, async (sandbox, ws) => {
      const privateFile = join(ws, "..", "private-notes.txt");
      await Deno.writeTextFile(privateFile, `${SECRET}\n`);
      // The plan is made (lock.json protected, .env hidden); a read-only command keeps it.
      match(
        await shell(sandbox, ws, "cat lock.json .env"),
        /^\{\}\ncat: \.env: Permission denied\n$/,
      );
      // Then something outside the sandbox's mounts (a background process started earlier, here
      // the test) swaps both for links: one to a home file, one to a program commands need.
      await Deno.remove(join(ws, "lock.json"));
      await Deno.symlink(privateFile, join(ws, "lock.json"));
      await Deno.rename(join(ws, ".env"), join(ws, "env.bak"));
      await Deno.symlink("/usr/bin/env", join(ws, ".env"));
      const output = await shell(sandbox, ws, `cat "${privateFile}"; /usr/bin/env echo env-runs`);
      ok(!output.includes(SECRET), output);
      ok(output.includes("env-runs"), output);
    });
  },
);

Deno.test("findDeniedPaths() hides whole a folder too deep to name what it holds", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    // 21 folders of 200 characters: the .env at the bottom lies past PATH_MAX (4096 bytes).
    const made = await new Deno.Command("bash", {
      args: [
        "-c",
        'cd "$1" && n=$(printf "d%.0s" {1..200}) && for i in {1..21}; do mkdir "$n" && cd "$n"; ' +
        "done && mkdir app && echo S=1 > app/.env",
        "x",
        ws,
      ],
    }).output();
    equal(made.success, true);
    const denials = (await pathDenials([{ action: "deny", path: "**/.env" }], BUILTIN_MANIFEST))!;
    const found = await findDeniedPaths(ws, denials);
    equal(found.hidden.length, 1);
    const [deep] = found.hidden;
    const bytes = new TextEncoder().encode(deep).length;
    ok(bytes > 3800 && bytes < 4096, `${bytes} bytes`);
    // It can still be named: bubblewrap mounts over it.
    equal(Deno.realPathSync(deep), deep);
  } finally {
    await new Deno.Command("rm", { args: ["-rf", ws] }).output();
  }
});

Deno.test("findDeniedPaths() never looks outside the workspace for a rule's matches", async () => {
  const parent = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-denied-" }));
  try {
    const ws = join(parent, "ws");
    await Deno.mkdir(join(parent, "sibling"), { recursive: true });
    await Deno.mkdir(ws);
    await Deno.writeTextFile(join(parent, "sibling/x.txt"), "x");
    const denials = (await pathDenials([
      { action: "deny", path: "../sibling/**" },
      { action: "deny", path: `${parent}/sibling/**` },
    ], BUILTIN_MANIFEST))!;
    deepEqual(await findDeniedPaths(ws, denials), { hidden: [], readOnly: [], complete: true });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
