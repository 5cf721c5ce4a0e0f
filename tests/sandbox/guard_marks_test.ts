/**
 * The guards' mount points (empty `.git` and `.tern` folders) that a tern killed by SIGKILL
 * left in a workspace go at the next start; a person's own empty folder stays. A real sandbox
 * in a child process, really killed.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createSandbox } from "../../src/sandbox/runtime.ts";
import {
  GuardLockBusyError,
  GuardMarks,
  guardNotesDir,
  removeLeftGuards,
} from "../../src/sandbox/guard_marks.ts";
import { bwrapTest, exists, sandboxOptionsFor } from "./_bwrap_helpers.ts";

bwrapTest(
  "createSandbox() removes the mount points a killed tern left, not the person's",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_gk_" }),
    );
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    try {
      const pid = await killedTern(root, ws);
      ok(await exists(join(ws, ".git")), "no .git mount point was made");
      ok(await exists(join(ws, ".tern")), "no .tern mount point was made");
      // The person makes an empty .tern of their own meanwhile.
      await Deno.remove(join(ws, ".tern"));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await Deno.mkdir(join(ws, ".tern"));
      const sandbox = await createSandbox(sandboxOptionsFor(root, ws, "guard-next"));
      try {
        equal((await sandbox.shell("true", { cwd: ws, timeoutMs: 30_000 })).code, 0);
      } finally {
        await sandbox.close();
      }
      equal(await exists(join(ws, ".git")), false, "the killed tern's .git is left");
      ok(await exists(join(ws, ".tern")), "the person's own empty .tern was removed");
      // Beside the private tmp folders, in the host's tmp folder.
      const notes = guardNotesDir(await Deno.realPath(Deno.env.get("TMPDIR") ?? "/tmp"));
      const left = (await exists(notes) ? [...Deno.readDirSync(notes)] : [])
        .filter((entry) => entry.name.startsWith(`${pid}-`));
      equal(left.length, 0, "the killed tern's note was left");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

/** Runs a sandbox with a background process and a command in a child, and kills it (SIGKILL). */
async function killedTern(root: string, ws: string): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      // Not every permission, as tern runs: Deno then reads no other process's `/proc`.
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-env",
      "--allow-sys",
      new URL("./_guard_kill_child.ts", import.meta.url).pathname,
      root,
      ws,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    said += value;
  }
  child.kill("SIGKILL");
  await child.status;
  await reader.cancel().catch(() => {});
  equal(said, "ready\n");
  return child.pid;
}

bwrapTest(
  "createSandbox() removes a killed tern's mount points even when it runs nothing",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_gk_" }),
    );
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    try {
      await killedTern(root, ws);
      ok(await exists(join(ws, ".git")), "no .git mount point was made");
      await (await createSandbox(sandboxOptionsFor(root, ws, "guard-idle"))).close();
      equal(await exists(join(ws, ".git")), false, "the killed tern's .git is left");
      equal(await exists(join(ws, ".tern")), false, "the killed tern's .tern is left");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

Deno.test("GuardMarks writes its notes only when they change, and keeps its folder until closed", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_gm_" }));
  try {
    const notes = join(root, "notes");
    const guard = join(root, ".git");
    const marks = new GuardMarks(notes);
    const noteFiles = () =>
      [...Deno.readDirSync(notes)].filter((entry) => entry.name.endsWith(".json"))
        .map((entry) => join(notes, entry.name));
    const make = async (paths: string[]) =>
      void await Promise.all(paths.map((path) => Deno.mkdir(path)));
    deepEqual(await marks.standOn([guard], make), [guard]);
    const [file] = noteFiles();
    ok(Deno.readTextFileSync(file).includes(guard), "the folder made was not noted");
    // Commands one after another stand on the same folder: the note is not written again
    // (a write would replace this stand-in).
    Deno.writeTextFileSync(file, "unchanged");
    for (let i = 0; i < 3; i++) deepEqual(await marks.standOn([guard], make), []);
    await marks.remove([], () => Promise.resolve());
    equal(Deno.readTextFileSync(file), "unchanged", "the unchanged notes were written again");
    ok(marks.made(guard), "the folder made is no longer known as made");
    // Changed notes are written over the old ones, whole, from the start.
    const other = join(root, ".tern");
    await Deno.mkdir(other);
    deepEqual(await marks.standOn([guard, other], make), []);
    const noted = JSON.parse(Deno.readTextFileSync(file)).map((mark: { path: string }) =>
      mark.path
    );
    deepEqual(noted.sort(), [guard, other].sort());
    await Deno.remove(other);
    // Gone: the note goes, the folder stays while the runtime lives.
    await Deno.remove(guard);
    await marks.remove([], () => Promise.resolve());
    equal(noteFiles().length, 0, "the note of a removed folder was left");
    ok(await exists(notes), "the notes' folder went between commands");
    await marks.close();
    equal(await exists(notes), false, "the notes' folder was left after the runtime closed");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

bwrapTest(
  "a tern that ends leaves the mount points another tern's running command stands on",
  async () => {
    const root = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tern_gs_" }),
    );
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    try {
      // Two terns in one workspace (two sessions, or one server's): the first makes the
      // guards' mount points, the second stands on them.
      const first = await createSandbox(sandboxOptionsFor(root, ws, "guard-first"));
      const second = await createSandbox(sandboxOptionsFor(root, ws, "guard-second"));
      let closed = false;
      try {
        equal((await first.shell("true", { cwd: ws, timeoutMs: 30_000 })).code, 0);
        ok(await exists(join(ws, ".tern")), "no .tern mount point was made");
        const attempt = second.shell(
          "while [ ! -e ready ]; do sleep 0.05; done; " +
            "mkdir -p .tern/hooks .git/hooks; echo planted > .tern/config.jsonc; " +
            "echo planted > .git/config; true",
          { cwd: ws, timeoutMs: 30_000 },
        );
        // The second's command is up (it waits for "ready") when the first ends.
        await new Promise((resolve) => setTimeout(resolve, 500));
        await first.close();
        closed = true;
        await Deno.writeTextFile(join(ws, "ready"), "");
        await attempt;
      } finally {
        if (!closed) await first.close();
        await second.close();
      }
      for (const name of [".tern/config.jsonc", ".git/config"]) {
        equal(await exists(join(ws, name)), false, `the second tern's command made ${name}`);
      }
      // Once both ended, the mount points go.
      deepEqual([...Deno.readDirSync(ws)].map((entry) => entry.name), ["ready"]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
);

Deno.test("GuardMarks waits a bounded time for a lock another tern keeps, and then makes nothing unnoted", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern_gl_" }));
  const notes = join(root, "notes");
  const guard = join(root, ".git");
  await Deno.mkdir(notes, { mode: 0o700 });
  // Another tern stopped mid-step (Ctrl-Z, SIGSTOP) keeps the notes' lock: an open file of its
  // own, so flock refuses this one's.
  const holder = await Deno.open(join(notes, ".lock"), { read: true, write: true, create: true });
  await holder.lock(true);
  const make = async (paths: string[]) =>
    void await Promise.all(paths.map((path) => Deno.mkdir(path)));
  const marks = new GuardMarks(notes, 200);
  try {
    const outcome = await Promise.race([
      marks.standOn([guard], make).then(() => "stood", (error) => error),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000)),
    ]);
    ok(outcome instanceof GuardLockBusyError, `standOn: ${outcome}`);
    ok(outcome.message.includes(join(notes, ".lock")), outcome.message);
    ok(/resume it .* or end it/.test(outcome.message), outcome.message);
    equal(await exists(guard), false, "a mount point was made without being noted");
    // Steps that may be skipped are: nothing removed, no error.
    await Deno.mkdir(guard);
    await marks.remove([guard], () => Promise.reject(new Error("removed under another's lock")));
    await removeLeftGuards(notes, () => Promise.reject(new Error("swept")), 200);
    await marks.close();
    ok(await exists(guard), "a folder went while another tern held the lock");
  } finally {
    holder.close();
  }
  try {
    // The lock free again: the same folders are stood on and noted.
    const next = new GuardMarks(notes, 200);
    deepEqual(await next.standOn([guard], make), []);
    await next.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
