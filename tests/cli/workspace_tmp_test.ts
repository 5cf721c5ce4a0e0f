/**
 * tern's temporary folder (TMPDIR, else /tmp) never lies in the workspace: commands write the
 * workspace, and tern keeps files there it trusts (the sandbox's seccomp filter, copies of hook
 * scripts it runs, the proxy's socket) and removes folders named like its private tmp folders.
 * A workspace that is or holds it is refused before anything runs, naming TMPDIR and the fix.
 */
import { equal, match, throws } from "node:assert/strict";
import { join } from "node:path";
import { resolveWorkspace } from "../../src/cli/process_env.ts";
import { runLauncher } from "../support/launcher.ts";
import { tempWorkspace } from "../support/tern_process.ts";

/** `fn()` with TMPDIR set to `value` (unset for undefined), put back after. */
function withTmpdir<T>(value: string | undefined, fn: () => T): T {
  const before = Deno.env.get("TMPDIR");
  if (value === undefined) Deno.env.delete("TMPDIR");
  else Deno.env.set("TMPDIR", value);
  try {
    return fn();
  } finally {
    if (before === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", before);
  }
}

Deno.test("resolveWorkspace() refuses a workspace that is or holds TMPDIR, naming it", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.mkdir(join(ws.dir, "tmp"));
    for (const tmp of [join(ws.dir, "tmp"), ws.dir, `${ws.dir}/./tmp/`]) {
      throws(
        () => withTmpdir(tmp, () => resolveWorkspace(ws.dir)),
        (error: Error) => {
          equal(error.name, "InputError");
          match(error.message, /^Cannot use workspace ".*": it (is|holds) tern's temporary/);
          match(error.message, /TMPDIR ".*"/);
          match(error.message, /set TMPDIR to a folder outside the workspace, or unset it$/);
          return true;
        },
        tmp,
      );
    }
    // Through a link into the workspace, and relative (the current folder's).
    await Deno.symlink(join(ws.dir, "tmp"), join(ws.home, "tmp-link"));
    throws(() => withTmpdir(join(ws.home, "tmp-link"), () => resolveWorkspace(ws.dir)), /TMPDIR/);
    const cwd = Deno.cwd();
    Deno.chdir(ws.dir);
    try {
      throws(() => withTmpdir("tmp", () => resolveWorkspace(ws.dir)), /TMPDIR "tmp"/);
    } finally {
      Deno.chdir(cwd);
    }
    // A TMPDIR beside the workspace, or one above it, is fine.
    equal(withTmpdir(ws.home, () => resolveWorkspace(ws.dir)), ws.dir);
    equal(withTmpdir(join(ws.dir, ".."), () => resolveWorkspace(ws.dir)), ws.dir);
    equal(withTmpdir(undefined, () => resolveWorkspace(ws.dir)), ws.dir);
    // The workspace /tmp itself holds tern's default one.
    throws(
      () => withTmpdir(undefined, () => resolveWorkspace("/tmp")),
      /it is tern's temporary folder "\/tmp", .*start tern in a folder of its own/,
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern refuses a TMPDIR inside the workspace before a run removes anything there", async () => {
  const ws = await tempWorkspace();
  try {
    // A folder of the repository's named like a private tmp folder that a killed run left.
    const planted = join(ws.dir, "tmp", "tern-tmp-planted");
    await Deno.mkdir(planted, { recursive: true });
    await Deno.writeTextFile(join(planted, "keep.txt"), "mine");
    const old = new Date(Date.now() - 3_600_000);
    await Deno.utime(planted, old, old);
    const { code, stderr } = await runLauncher(["sandbox", "explain"], {
      cwd: ws.dir,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: ws.home,
        TERN_HOME: ws.home,
        TMPDIR: join(ws.dir, "tmp"),
      },
    });
    equal(code, 2, stderr);
    match(stderr, /it holds tern's temporary folder TMPDIR ".*\/tmp", where commands could/);
    equal(await Deno.readTextFile(join(planted, "keep.txt")), "mine");
  } finally {
    await ws.cleanup();
  }
});
