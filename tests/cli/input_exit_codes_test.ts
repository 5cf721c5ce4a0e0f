/** Bad input exits 2 and an answer exits 0, as `exit_codes.ts` says, through the real tern. */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern run --image with a missing, outside or non-image file exits 2 (bad input)", async () => {
  const ws = await tempWorkspace();
  try {
    await Deno.writeTextFile(join(ws.dir, "fake.png"), "not an image");
    const env = { HOME: ws.home, TERN_HOME: join(ws.home, ".tern"), ANTHROPIC_API_KEY: "k" };
    for (const image of ["missing.png", "../x.png", "fake.png"]) {
      const run = await runTern(
        ["run", "--provider", "anthropic", "-m", "claude-sonnet-4-5", "--image", image, "look"],
        { cwd: ws.dir, env },
      );
      equal(run.code, 2, `${image}: ${run.stderr}`);
      match(run.stderr, /Cannot attach image|not a PNG/);
      equal(run.stderr.includes("internal error"), false);
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern mcp trust without a name lists what there is to trust and exits 0", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: join(ws.home, ".tern") };
    const run = await runTern(["mcp", "trust"], { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    match(run.stdout, /There are no project MCP servers in ".*" to trust/);
  } finally {
    await ws.cleanup();
  }
});
