/**
 * Variables a profile or a grant names reach shell commands, from tern's own environment, and
 * nothing else does: a variable that loads code or holds a secret never passes, and a grant that
 * could not pass anything is refused with the reason, before anyone is asked.
 */
import { equal, match } from "node:assert/strict";
import { runScriptedCalls } from "../support/scripted_calls.ts";

const TOKEN = "ghp_" + "q8Zr4LmT0vKp2WnY6sJdQ8Zr4LmT0vKp2WnY";

async function place(config: unknown): Promise<{ dir: string; home: string }> {
  const dir = await Deno.makeTempDir({ prefix: "tern-env-grants-" });
  const home = await Deno.makeTempDir({ prefix: "tern-env-grants-home-" });
  await Deno.writeTextFile(`${home}/config.jsonc`, JSON.stringify(config));
  return { dir, home };
}

const ENV = {
  MYVAR: "hello there",
  DEPLOY_X: TOKEN,
  GIT_CONFIG_COUNT: "0",
  TERN_EXTRA_ENV: "MYVAR,DEPLOY_X,GIT_CONFIG_COUNT",
};
const ECHO = "echo my=[$MYVAR] deploy=[$DEPLOY_X] git=[$GIT_CONFIG_COUNT] unset=[$UNSET_ONE]";

Deno.test("a profile's variables reach commands, but never one that holds a secret or loads code", async () => {
  const at = await place({
    profiles: { mine: { env: ["MYVAR", "DEPLOY_X", "GIT_CONFIG_COUNT", "UNSET_ONE"] } },
    profile: "mine",
  });
  try {
    const run = await runScriptedCalls(at, [{ name: "bash", args: { command: ECHO } }], ENV);
    equal(run.code, 0, run.stderr);
    match(run.results[0], /my=\[hello there\] deploy=\[\] git=\[\] unset=\[\]/);
    equal(run.requests.includes(TOKEN), false);
  } finally {
    await Deno.remove(at.dir, { recursive: true });
    await Deno.remove(at.home, { recursive: true });
  }
});

Deno.test("request_permissions passes a granted variable and refuses ones that could not pass", async () => {
  const at = await place({
    rules: [{
      action: "allow",
      tool: "request_permissions",
      env: ["MYVAR", "DEPLOY_X", "UNSET_ONE", "GIT_CONFIG_COUNT"],
    }],
  });
  try {
    const run = await runScriptedCalls(at, [
      { name: "request_permissions", args: { env: ["DEPLOY_X"], reason: "deploy" } },
      { name: "request_permissions", args: { env: ["GIT_CONFIG_COUNT"], reason: "git" } },
      { name: "request_permissions", args: { env: ["UNSET_ONE"], reason: "x" } },
      { name: "request_permissions", args: { env: ["MYVAR"], reason: "greeting" } },
      { name: "bash", args: { command: ECHO } },
    ], ENV);
    equal(run.code, 0, run.stderr);
    match(run.results[0], /DEPLOY_X.*secret/);
    match(run.results[1], /GIT_CONFIG_COUNT.*code/);
    match(run.results[2], /UNSET_ONE.*may not read.*TERN_EXTRA_ENV=UNSET_ONE/);
    match(run.results[3], /Granted: env MYVAR/);
    match(run.results[4], /my=\[hello there\] deploy=\[\] git=\[\]/);
    equal(run.requests.includes(TOKEN), false);
  } finally {
    await Deno.remove(at.dir, { recursive: true });
    await Deno.remove(at.home, { recursive: true });
  }
});
