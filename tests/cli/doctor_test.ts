/** `tern doctor`: the reviewer check recommends a reviewer model of its own. */
import { equal, match } from "node:assert/strict";
import { reviewerLine } from "../../src/cli/doctor.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("reviewerLine() recommends a separate reviewModel when it is the working model", () => {
  match(reviewerLine({ model: "m1" }), /^note reviewer .*"m1".*set "reviewModel"/);
  match(reviewerLine({ model: "m1", reviewModel: "m1" }), /^note reviewer .*set "reviewModel"/);
  match(reviewerLine({ model: "m1", reviewModel: "m2" }), /^ok {3}reviewer +"m2" reviews/);
  // A project's model is reviewed by the person's own.
  match(
    reviewerLine({ model: "weak", ownModel: { model: "mine", explicit: true } }),
    /^ok {3}reviewer +"mine" reviews .*"weak"/,
  );
});

Deno.test("tern doctor prints the reviewer recommendation without failing on it", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_MODEL: "same-model" };
    const same = await runTern(["doctor"], { cwd: ws.dir, env });
    match(
      same.stdout,
      /^note reviewer +--mode auto reviews calls with the working model "same-model"/m,
    );
    const separate = await runTern(["doctor"], {
      cwd: ws.dir,
      env: { ...env, TERN_REVIEW_MODEL: "review-model" },
    });
    match(separate.stdout, /^ok {3}reviewer +"review-model" reviews calls/m);
    equal(same.code, separate.code, same.stdout);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern doctor fails on a rule every run would refuse, and still checks the sandbox", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home };
    // A rule whose own example does not match it: `tern run` refuses to start with it.
    const rule = { action: "allow", command: "npm test", match: ["npm run build"] };
    await Deno.writeTextFile(`${ws.home}/config.jsonc`, JSON.stringify({ rules: [rule] }));
    const bad = await runTern(["doctor"], { cwd: ws.dir, env });
    match(bad.stdout, /^FAIL rules +Invalid permission rule 1/m);
    match(bad.stdout, /^(ok|FAIL) +worker/m);
    equal(bad.code === 0, false, bad.stdout);
    const run = await runTern(["run", "hi"], { cwd: ws.dir, env: { ...env, TERN_API_KEY: "k" } });
    equal(run.code, 2, run.stderr);
    match(run.stderr, /Invalid permission rule 1/);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern doctor with a configuration that does not load fails that check, checks the sandbox with the defaults and exits 2", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_PLAN_CONCURRENCY: "99" };
    const bad = await runTern(["doctor"], { cwd: ws.dir, env });
    equal(bad.code, 2, bad.stdout + bad.stderr);
    match(bad.stdout, /^FAIL config +Invalid environment variable TERN_PLAN_CONCURRENCY/m);
    match(bad.stdout, /^note config +the checks below use the built-in defaults/m);
    match(bad.stdout, /^ok +rules +0 rules/m);
    match(bad.stdout, /^(ok|FAIL) +worker/m);
    match(bad.stdout, /^(ok|FAIL) +shell/m);
  } finally {
    await ws.cleanup();
  }
});
