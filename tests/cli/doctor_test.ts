/** `tern doctor`: the reviewer check recommends a reviewer model of its own. */
import { equal, match } from "node:assert/strict";
import { reviewerLine } from "../../src/cli/doctor.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("reviewerLine() recommends a separate reviewModel when it is the working model", () => {
  match(reviewerLine({ model: "m1" }), /^note reviewer .*"m1".*set "reviewModel"/);
  match(reviewerLine({ model: "m1", reviewModel: "m1" }), /^note reviewer .*set "reviewModel"/);
  match(reviewerLine({ model: "m1", reviewModel: "m2" }), /^ok {3}reviewer +"m2" reviews/);
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
