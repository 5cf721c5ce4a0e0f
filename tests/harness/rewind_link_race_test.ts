/**
 * Checkpoints and restores while a process of the session swaps a workspace folder with a
 * symlink to a folder outside, with `renameat2(RENAME_EXCHANGE)` as fast as it can: the restore
 * process never removes or writes a file outside, and a snapshot never stores an outside file's
 * content. Both run in bubblewrap's view (src/harness/rewind/view.ts), where the link leads
 * nowhere. Real processes, real git, real bubblewrap; each race is bounded in time.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { runRestore } from "../../src/harness/rewind/restore_ops.ts";
import type { RestoreOp } from "../../src/harness/rewind/restore_ops.ts";
import { ShadowStore } from "../../src/harness/rewind/shadow_store.ts";
import { viewLauncher } from "../../src/harness/rewind/view.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";
import { flipperNeed, whileFlipping } from "../support/link_flipper.ts";
import { temp } from "../support/host_tool.ts";

if (!flipperNeed.ok) console.warn(`\n!!!!! SKIPPED the rewind race tests: ${flipperNeed.missing}`);

/** How long each race runs at most (it stops at the first leak). */
const RACE_MS = 8_000;

testWith(
  [bwrapNeed],
  "viewLauncher() shows a program nothing outside its mounts, and only the writable ones writable",
  async () => {
    const ws = await temp("tern-view-ws-");
    const store = await temp("tern-view-store-");
    const outside = await temp("tern-view-out-");
    try {
      Deno.writeTextFileSync(join(outside, "secret"), "SECRET");
      Deno.symlinkSync(outside, join(ws, "link"));
      const launcher = await viewLauncher([
        { path: ws, writable: false },
        { path: store, writable: true },
      ], ws);
      ok(launcher !== undefined);
      const script = 'cat link/secret; echo x > link/new; echo x > made; echo x > "$2/made"; ' +
        'ls -a "$1" | wc -l';
      const [program, ...args] = [...launcher, "/bin/sh", "-c", script, "sh", outside, store];
      const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" })
        .output();
      const stdout = new TextDecoder().decode(out.stdout);
      ok(!stdout.includes("SECRET"), stdout);
      equal(stdout.trim(), "0", "the outside folder does not exist in the view");
      deepEqual([...Deno.readDirSync(outside)].map((entry) => entry.name), ["secret"]);
      deepEqual([...Deno.readDirSync(ws)].map((entry) => entry.name), ["link"]);
      equal(Deno.readTextFileSync(join(store, "made")), "x\n");
    } finally {
      await Deno.remove(ws, { recursive: true });
      await Deno.remove(store, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed, flipperNeed],
  "runRestore() never removes or writes outside while a folder is swapped with a link to outside",
  async () => {
    const base = await temp("tern-restore-race-");
    const ws = join(base, "ws");
    const outside = join(base, "outside");
    const count = 300;
    try {
      Deno.mkdirSync(join(ws, "d"), { recursive: true });
      Deno.mkdirSync(outside);
      for (let i = 0; i < count; i++) {
        Deno.writeTextFileSync(join(outside, `f${i}`), "victim");
        Deno.writeTextFileSync(join(ws, "d", `f${i}`), "ws");
      }
      Deno.symlinkSync(outside, join(ws, "dlink"));
      const removes: RestoreOp[] = Array.from({ length: count }, (_, i) => ({
        op: "remove",
        path: `d/f${i}`,
      }));
      const writes: RestoreOp[] = Array.from({ length: count }, (_, i) => ({
        op: "write",
        path: `d/g${i}`,
        data: new TextEncoder().encode("restored\n"),
        executable: false,
      }));
      let runs = 0;
      await whileFlipping(ws, "d", "dlink", async () => {
        const end = Date.now() + RACE_MS;
        while (Date.now() < end) {
          await runRestore(ws, runs % 2 === 0 ? removes : writes);
          runs++;
          const names = [...Deno.readDirSync(outside)].map((entry) => entry.name);
          if (names.length !== count || names.some((name) => !name.startsWith("f"))) break;
        }
      });
      const names = [...Deno.readDirSync(outside)].map((entry) => entry.name).sort();
      const victims = Array.from({ length: count }, (_, i) => `f${i}`).sort();
      deepEqual(names, victims, `outside after ${runs} restores`);
      ok(runs >= 2, `only ${runs} restores ran`);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed, flipperNeed],
  "runRestore() never writes into .git while a folder is swapped with a link to it",
  async () => {
    const ws = await temp("tern-restore-git-race-");
    const hooks = join(ws, ".git", "hooks");
    try {
      Deno.mkdirSync(hooks, { recursive: true });
      Deno.writeTextFileSync(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
      Deno.mkdirSync(join(ws, "foo", "hooks"), { recursive: true });
      // Both names are the workspace's own: any command may make and swap them.
      Deno.symlinkSync(".git", join(ws, "bar"));
      const write: RestoreOp[] = [{
        op: "write",
        path: "foo/hooks/pre-commit",
        data: new TextEncoder().encode("#!/bin/sh\necho PLANTED\n"),
        executable: true,
      }];
      let runs = 0;
      await whileFlipping(ws, "foo", "bar", async () => {
        const end = Date.now() + RACE_MS;
        while (Date.now() < end && [...Deno.readDirSync(hooks)].length === 0) {
          await runRestore(ws, write);
          runs++;
        }
      });
      deepEqual([...Deno.readDirSync(hooks)].map((entry) => entry.name), [], `after ${runs}`);
      ok(runs >= 2, `only ${runs} restores ran`);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
);

testWith(
  [bwrapNeed, flipperNeed],
  "ShadowStore.snapshot() never stores an outside file's content while a folder is swapped with a link",
  async () => {
    const base = await temp("tern-snapshot-race-");
    const ws = join(base, "ws");
    const secret = join(base, "secret");
    const gitDir = join(base, "store.git");
    const count = 50;
    const secretText = (i: number) => `SECRET-${i}\n`;
    try {
      Deno.mkdirSync(join(ws, "d"), { recursive: true });
      Deno.mkdirSync(secret);
      for (let i = 0; i < count; i++) {
        Deno.writeTextFileSync(join(secret, `s${i}`), secretText(i));
        Deno.writeTextFileSync(join(ws, "d", `s${i}`), `public-${i}\n`);
      }
      Deno.symlinkSync(secret, join(ws, "dlink"));
      const store = await ShadowStore.open(gitDir, ws, { indexName: "race", maxFileBytes: 4096 });
      const leaked = () => {
        for (let i = 0; i < count; i++) {
          const id = gitHash(secretText(i));
          const has = new Deno.Command("git", {
            args: [`--git-dir=${gitDir}`, "cat-file", "-e", id],
            stderr: "null",
          }).outputSync();
          if (has.success) return `the content of ${join(secret, `s${i}`)}`;
        }
        return undefined;
      };
      let snapshots = 0;
      await whileFlipping(ws, "d", "dlink", async () => {
        const end = Date.now() + RACE_MS;
        // On a loaded machine every snapshot of the first stretch may fail (the tree changes
        // under it): the race goes on until one succeeded, for at most four times as long.
        const last = Date.now() + 4 * RACE_MS;
        const racing = () => Date.now() < end || (snapshots === 0 && Date.now() < last);
        while (racing() && leaked() === undefined) {
          // A command touches the files: the next snapshot reads them again.
          const now = new Date();
          for (let i = 0; i < count; i++) {
            await Deno.utime(join(ws, "d", `s${i}`), now, now).catch(() => {});
          }
          // Failing while the tree changes under it is fine; storing outside content is not.
          await store.snapshot().then(() => snapshots++, () => {});
        }
      });
      equal(leaked(), undefined);
      ok(snapshots >= 1, "no snapshot succeeded");
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
);

/** git's blob id of `text`. */
function gitHash(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}
