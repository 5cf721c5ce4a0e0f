/**
 * An unknown sandbox profile is refused by `tern config` and `tern doctor` as by a run: config
 * shows its table (where the profile came from) and exits 2 with the run's error; doctor's
 * config row fails naming the profile.
 */
import { equal, match, ok } from "node:assert/strict";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const UNKNOWN = /Unknown sandbox profile "nope": expected one of ":read-only"/;

Deno.test("tern config --profile with an unknown name fails with the run's error", async () => {
  const ws = await tempWorkspace();
  const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
  try {
    const run = await runTern(["run", "-m", "scripted", "--profile", "nope", "hi"], {
      cwd: ws.dir,
      env,
    });
    equal(run.code, 2, run.stderr);
    match(run.stderr, UNKNOWN);
    const config = await runTern(["config", "--profile", "nope"], { cwd: ws.dir, env });
    equal(config.code, 2, config.stderr);
    match(config.stderr, UNKNOWN);
    match(config.stdout, /^profile\s+nope/m);
    const known = await runTern(["config", "--profile", ":read-only"], { cwd: ws.dir, env });
    equal(known.code, 0, known.stderr);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern doctor --profile with an unknown name fails its config row, naming it", async () => {
  const ws = await tempWorkspace();
  try {
    const doctor = await runTern(["doctor", "--profile", "nope"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(doctor.code, 2, doctor.stdout + doctor.stderr);
    const row = doctor.stdout.split("\n").find((line) => / config /.test(line)) ?? "";
    match(row, /^FAIL config\s+Unknown sandbox profile "nope"/, doctor.stdout);
    ok(!/^ok\s+config/m.test(doctor.stdout), doctor.stdout);
  } finally {
    await ws.cleanup();
  }
});
