/**
 * The person's deny rules with a path hold for commands and the tool worker's folder-wide tools
 * too: what they keep from the reading tools is hidden from the view, what they keep from the
 * writing tools is read-only. Real bubblewrap, real worker, real files.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { PermissionRule } from "../../src/config/schema.ts";
import { findDeniedPaths, pathDenials } from "../../src/sandbox/denied_paths.ts";
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
      // A link is given by its own path: bubblewrap hides its target (here a folder in the
      // workspace); a link out of the workspace (to `/`, to a host file) is left alone.
      join(ws, "secrets-link"),
    ]);
    deepEqual(found.readOnly, [join(ws, "package.json")]);
    equal(found.complete, true);
    // A budget too small for the tree says so.
    equal((await findDeniedPaths(ws, denials!, { maxEntries: 3 })).complete, false);
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
