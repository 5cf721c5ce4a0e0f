/**
 * A new user's HOME and tern home, as the real `tern` meets them: a mistyped HOME or TERN_HOME
 * is refused before anything is written, and `tern doctor` changes nothing on the machine.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

// Deno itself would make its cache in the HOME given without DENO_DIR (bin/tern always sets
// it): the cache this process uses, where Deno puts it by default when none is set.
const DENO: Record<string, string> = {
  DENO_DIR: Deno.env.get("DENO_DIR") ??
    join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "/root", ".cache"), "deno"),
};

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("tern run refuses a HOME or TERN_HOME that does not exist, and makes neither", async () => {
  const ws = await tempWorkspace();
  try {
    const args = ["run", "--base-url", "http://127.0.0.1:9/v1", "hi"];
    const gone = join(ws.home, "gone");
    const noHome = await runTern(args, {
      cwd: ws.dir,
      env: { ...DENO, HOME: gone, TERN_API_KEY: "k" },
    });
    equal(noHome.code, 2, noHome.stderr);
    match(noHome.stderr, /^tern: HOME ".*\/gone" does not exist: .*set HOME to your home folder/m);
    const typo = join(ws.home, "typo", ".tern");
    const env = { ...DENO, HOME: ws.home, TERN_HOME: typo, TERN_API_KEY: "k" };
    const noTernHome = await runTern(args, { cwd: ws.dir, env });
    equal(noTernHome.code, 2, noTernHome.stderr);
    match(noTernHome.stderr, /^tern: TERN_HOME ".*\/typo\/\.tern" does not exist: /m);
    equal(await exists(gone), false);
    equal(await exists(join(ws.home, "typo")), false);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern doctor says a missing ~/.tern will be made on first run, and does not make it", async () => {
  const ws = await tempWorkspace();
  try {
    const doctor = await runTern(["doctor"], { cwd: ws.dir, env: { ...DENO, HOME: ws.home } });
    match(doctor.stdout, /^ok {3}tern home +".*\/\.tern" will be created on first run$/m);
    match(doctor.stdout, /^ok {3}shell /m);
    equal(await exists(join(ws.home, ".tern")), false, doctor.stdout);
    equal([...Deno.readDirSync(ws.home)].length, 0);
    // An existing tern home is not announced.
    const made = await runTern(["doctor"], {
      cwd: ws.dir,
      env: { ...DENO, HOME: ws.home, TERN_HOME: ws.home },
    });
    ok(!/tern home/.test(made.stdout), made.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern doctor with a HOME that does not exist fails the config and checks the defaults", async () => {
  const ws = await tempWorkspace();
  try {
    const gone = join(ws.home, "gone");
    const doctor = await runTern(["doctor"], { cwd: ws.dir, env: { ...DENO, HOME: gone } });
    equal(doctor.code, 2, doctor.stdout);
    match(doctor.stdout, /^FAIL config +HOME ".*\/gone" does not exist: /m);
    match(doctor.stdout, /^note config +the checks below use the built-in defaults$/m);
    match(doctor.stdout, /^(ok|FAIL) +shell /m);
    equal(await exists(gone), false);
  } finally {
    await ws.cleanup();
  }
});
