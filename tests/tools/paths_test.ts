import { equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { ToolError } from "../../src/core/observation.ts";
import {
  checkPath,
  isInside,
  protectedFolder,
  quotedName,
  resolveInWorkspace,
} from "../../src/tools/paths.ts";
import { withSandbox, writeFiles } from "./_helpers.ts";

function denied(pattern: RegExp) {
  return (error: unknown) => {
    ok(error instanceof ToolError, String(error));
    equal(error.code, "POLICY_DENIED");
    ok(pattern.test(error.message), error.message);
    return true;
  };
}

Deno.test("resolveInWorkspace() resolves relative and inside-absolute paths to real paths", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "src/a.ts": "a" });
    equal(await resolveInWorkspace(ws, "src/a.ts"), join(ws, "src/a.ts"));
    equal(await resolveInWorkspace(ws, "./src/../src/a.ts"), join(ws, "src/a.ts"));
    equal(await resolveInWorkspace(ws, join(ws, "src/a.ts")), join(ws, "src/a.ts"));
    equal(await resolveInWorkspace(ws, "."), ws);
    equal(await resolveInWorkspace(ws, "new/dir/file.ts"), join(ws, "new/dir/file.ts"));
  });
});

Deno.test("resolveInWorkspace() refuses .. with the workspace in the message", async () => {
  await withSandbox(async ({ ws }) => {
    await rejects(
      resolveInWorkspace(ws, "../x"),
      (error: unknown) => {
        ok(error instanceof ToolError);
        equal(error.code, "POLICY_DENIED");
        equal(error.message, `Path "../x" is outside the workspace "${ws}"`);
        return true;
      },
    );
    await rejects(resolveInWorkspace(ws, "src/../../outside/secret.txt"), denied(/outside/));
  });
});

Deno.test("resolveInWorkspace() refuses absolute paths outside, including a sibling prefix", async () => {
  await withSandbox(async ({ root, ws, outside }) => {
    await Deno.mkdir(`${ws}2`);
    await Deno.writeTextFile(`${ws}2/f.txt`, "x");
    await rejects(resolveInWorkspace(ws, join(outside, "secret.txt")), denied(/outside/));
    await rejects(resolveInWorkspace(ws, `${ws}2/f.txt`), denied(/outside/));
    await rejects(resolveInWorkspace(ws, "/etc/passwd"), denied(/outside/));
    await rejects(resolveInWorkspace(ws, root), denied(/outside/));
  });
});

Deno.test("resolveInWorkspace() refuses symlinks that point outside, for reads and writes", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await Deno.symlink(join(outside, "secret.txt"), join(ws, "link.txt"));
    await Deno.symlink(outside, join(ws, "linkdir"));
    await Deno.symlink(join(outside, "not-yet.txt"), join(ws, "dangling.txt"));
    await rejects(resolveInWorkspace(ws, "link.txt"), denied(/outside/));
    await rejects(resolveInWorkspace(ws, "linkdir/secret.txt"), denied(/outside/));
    await rejects(resolveInWorkspace(ws, "linkdir/new.txt", { forWrite: true }), denied(/outside/));
    await rejects(resolveInWorkspace(ws, "linkdir/a/b/new.txt", { forWrite: true }), denied(/out/));
    await rejects(resolveInWorkspace(ws, "dangling.txt", { forWrite: true }), denied(/outside/));
  });
});

Deno.test("resolveInWorkspace() follows symlinks that stay inside", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "real/a.txt": "a" });
    await Deno.symlink("real", join(ws, "alias"));
    equal(await resolveInWorkspace(ws, "alias/a.txt"), join(ws, "real/a.txt"));
    equal(await resolveInWorkspace(ws, "alias/new.txt"), join(ws, "real/new.txt"));
  });
});

Deno.test("resolveInWorkspace() refuses FIFOs", async () => {
  await withSandbox(async ({ ws }) => {
    const made = await new Deno.Command("mkfifo", { args: [join(ws, "pipe")] }).output();
    ok(made.success);
    await rejects(resolveInWorkspace(ws, "pipe"), denied(/FIFO/));
    await rejects(resolveInWorkspace(ws, "pipe", { forWrite: true }), denied(/FIFO/));
  });
});

Deno.test("resolveInWorkspace() refuses writing a file with several hard links", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "a" });
    await Deno.link(join(ws, "a.txt"), join(ws, "b.txt"));
    equal(await resolveInWorkspace(ws, "a.txt"), join(ws, "a.txt"));
    await rejects(resolveInWorkspace(ws, "a.txt", { forWrite: true }), denied(/2 hard links/));
  });
});

Deno.test("isInside() compares whole path components", () => {
  ok(isInside("/ws", "/ws"));
  ok(isInside("/ws", "/ws/a"));
  ok(!isInside("/ws", "/ws2"));
  ok(!isInside("/ws", "/w"));
  ok(isInside("/", "/etc"));
});

Deno.test("checkPath() returns the real path with its lstat, or null info when missing", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { "a.txt": "abc" });
    const found = await checkPath(ws, "./a.txt");
    equal(found.path, "./a.txt");
    equal(found.real, join(ws, "a.txt"));
    equal(found.info?.size, 3);
    equal((await checkPath(ws, "new.txt")).info, null);
  });
});

Deno.test("checkPath() refuses a NUL byte as INVALID_ARGUMENTS", async () => {
  await withSandbox(async ({ ws }) => {
    await rejects(checkPath(ws, "a\0b"), (error: unknown) => {
      ok(error instanceof ToolError);
      equal(error.code, "INVALID_ARGUMENTS");
      equal(error.message, 'Path "a\\u0000b" contains a NUL byte');
      return true;
    });
  });
});

Deno.test("checkPath() refuses /proc, /dev and /sys even in a workspace at /", async () => {
  await rejects(checkPath("/", "/proc/self/root/etc/passwd"), denied(/is in \/proc:/));
  await rejects(checkPath("/", "dev/tcp/127.0.0.1/80", { forWrite: true }), denied(/in \/dev:/));
  await rejects(checkPath("/", "/sys/kernel"), denied(/is in \/sys:/));
  await withSandbox(async ({ ws }) => {
    await Deno.symlink("/proc/self/environ", join(ws, "env"));
    await rejects(checkPath(ws, "env"), denied(/is in \/proc:/));
  });
});

Deno.test("checkPath() refuses writes in .git and .tern at any depth unless allowed", async () => {
  await withSandbox(async ({ ws }) => {
    await writeFiles(ws, { ".git/config": "", "sub/.git/HEAD": "", ".tern/config.jsonc": "" });
    for (const path of [".git/config", "sub/.git/hooks/pre-commit", ".Git/x", ".git"]) {
      await rejects(
        checkPath(ws, path, { forWrite: true }),
        denied(/paths in \.git are protected/),
      );
      equal((await checkPath(ws, path)).path, path);
    }
    await rejects(checkPath(ws, ".tern/config.jsonc", { forWrite: true }), denied(/\.tern are/));
    const allowed = await checkPath(ws, ".git/config", { forWrite: true, allowProtected: true });
    equal(allowed.real, join(ws, ".git/config"));
    equal((await checkPath(ws, ".gitignore", { forWrite: true })).info, null);
  });
});

Deno.test("protectedFolder() names the protected folder a path is in", () => {
  equal(protectedFolder("/ws", "/ws/.git/hooks/pre-commit"), ".git");
  equal(protectedFolder("/ws", "/ws/a/.GIT"), ".git");
  equal(protectedFolder("/ws", "/ws/.tern/config.jsonc"), ".tern");
  equal(protectedFolder("/ws", "/ws/.github/workflows/ci.yml"), null);
  equal(protectedFolder("/ws", "/.git/config"), null);
});

Deno.test("protectedFolder() sees .git and .tern through the characters HFS+ leaves out of names", async () => {
  // On HFS+ ".g\u200cit" names the same folder as ".git" (git refuses such paths for that).
  equal(protectedFolder("/ws", "/ws/.g\u200cit/hooks/pre-commit"), ".git");
  equal(protectedFolder("/ws", "/ws/sub/\ufeff.TE\u200dRN/config.jsonc"), ".tern");
  equal(protectedFolder("/ws", "/ws/.g\u00e9t/x"), null);
  await withSandbox(async ({ ws }) => {
    await rejects(
      checkPath(ws, ".g\u200cit/hooks/pre-commit", { forWrite: true }),
      denied(/paths in \.git are protected/),
    );
  });
});

Deno.test("checkPath() allows a path inside a read root, and says which root allowed it", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const roots = { read: [outside], write: [] };
    const found = await checkPath(ws, join(outside, "secret.txt"), { roots });
    equal(found.real, join(outside, "secret.txt"));
    equal(found.root, outside);
    ok(found.info?.isFile);
    equal((await checkPath(ws, "a.txt", { roots })).root, ws);
    equal((await checkPath(ws, `../outside/new.txt`, { roots })).info, null);
    await rejects(checkPath(ws, "/etc/passwd", { roots }), denied(/outside the workspace/));
  });
});

Deno.test("checkPath() refuses writing into a read-only root, allows it in a write root", async () => {
  await withSandbox(async ({ ws, outside }) => {
    const target = join(outside, "secret.txt");
    await rejects(
      checkPath(ws, target, { forWrite: true, roots: { read: [outside], write: [] } }),
      denied(/granted for reading only/),
    );
    const checked = await checkPath(ws, target, {
      forWrite: true,
      roots: { read: [], write: [outside] },
    });
    equal(checked.root, outside);
    equal((await checkPath(ws, target, { roots: { read: [], write: [outside] } })).real, target);
  });
});

Deno.test("checkPath() refuses a sibling that only shares a root's name as a prefix", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await writeFiles(`${outside}2`, { "f.txt": "x" });
    const roots = { read: [outside], write: [outside] };
    await rejects(checkPath(ws, `${outside}2/f.txt`, { roots }), denied(/outside/));
    await rejects(checkPath(ws, `${outside}2/f.txt`, { roots, forWrite: true }), denied(/outside/));
  });
});

Deno.test("checkPath() refuses a symlink in a root that points elsewhere", async () => {
  await withSandbox(async ({ root, ws, outside }) => {
    await writeFiles(root, { "elsewhere/private.txt": "private" });
    await Deno.symlink(join(root, "elsewhere/private.txt"), join(outside, "link.txt"));
    await Deno.symlink(join(root, "elsewhere"), join(outside, "linkdir"));
    const roots = { read: [outside], write: [outside] };
    await rejects(checkPath(ws, join(outside, "link.txt"), { roots }), denied(/outside/));
    await rejects(checkPath(ws, join(outside, "linkdir/private.txt"), { roots }), denied(/out/));
    await rejects(
      checkPath(ws, join(outside, "linkdir/new.txt"), { roots, forWrite: true }),
      denied(/outside/),
    );
  });
});

Deno.test("checkPath() keeps .git protected inside a write root, also through a symlink", async () => {
  await withSandbox(async ({ ws, outside }) => {
    await writeFiles(outside, { "repo/.git/config": "[core]\n", "gitdir/hooks/pre-commit": "" });
    await Deno.symlink(join(outside, "gitdir"), join(ws, ".git"));
    const roots = { read: [], write: [outside] };
    await rejects(
      checkPath(ws, join(outside, "repo/.git/config"), { forWrite: true, roots }),
      denied(/paths in \.git are protected/),
    );
    await rejects(
      checkPath(ws, ".git/hooks/pre-commit", { forWrite: true, roots }),
      denied(/paths in \.git are protected/),
    );
    equal((await checkPath(ws, join(outside, "repo/.git/config"), { roots })).root, outside);
  });
});

Deno.test("checkPath() keeps /proc refused under a root of /, and refuses relative roots", async () => {
  await withSandbox(async ({ ws }) => {
    const roots = { read: ["/"], write: [] };
    await rejects(checkPath(ws, "/proc/self/environ", { roots }), denied(/is in \/proc:/));
    await rejects(checkPath(ws, "a.txt", { roots: { read: ["rel"], write: [] } }), TypeError);
  });
});

Deno.test("quotedName() spells out what draws as nothing, so two names that look alike differ", () => {
  equal(quotedName("config.ts"), "config.ts");
  // Zero-width, bidi and a tag character (astral: both halves spelled out).
  equal(quotedName("con\u200bfig.ts"), '"con\\u200bfig.ts"');
  equal(quotedName("a\u202etxt.sh"), '"a\\u202etxt.sh"');
  equal(quotedName("x\u{E0041}.ts"), '"x\\udb40\\udc41.ts"');
  // Still a JSON string of the same name.
  equal(JSON.parse(quotedName("con\u200bfig\n.ts")), "con\u200bfig\n.ts");
});
