/** bwrapArgvFor(): a program (no shell) in the shell command sandbox, stdout and stderr apart. */
import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { bashArgv, bwrapArgs, bwrapArgvFor, shellPrefix } from "../../src/sandbox/bwrap.ts";
import type { ShellPlan } from "../../src/sandbox/types.ts";
import { bwrapTest, exists, planFor, withBox } from "./_bwrap_helpers.ts";

const PLAN: ShellPlan = {
  cwd: "/work/ws",
  writable: ["/work/ws"],
  readOnly: [],
  hidden: [],
  network: false,
  env: { PATH: "/usr/bin:/bin" },
};

Deno.test("bwrapArgvFor() ends with --chdir <cwd> -- and the program's argv as given", () => {
  const args = bwrapArgvFor(PLAN, ["prog", "a b", "$HOME"]);
  deepEqual(args.slice(-6), ["--chdir", "/work/ws", "--", "prog", "a b", "$HOME"]);
  equal(args[0], "--unshare-all");
});

Deno.test("bwrapArgs() is bwrapArgvFor() with the bash argv", () => {
  for (const plan of [PLAN, { ...PLAN, network: true, hidden: ["/etc/hostname"] }]) {
    deepEqual(
      bwrapArgs(plan, "echo hi"),
      bwrapArgvFor(plan, bashArgv("echo hi", shellPrefix(plan))),
    );
  }
});

Deno.test("bwrapArgvFor() refuses an empty argv", () => {
  throws(() => bwrapArgvFor(PLAN, []), TypeError);
});

async function runInBwrap(plan: ShellPlan, argv: string[]) {
  const result = await new Deno.Command("bwrap", {
    args: bwrapArgvFor(plan, argv),
    clearEnv: true,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: result.code,
    stdout: decoder.decode(result.stdout),
    stderr: decoder.decode(result.stderr),
  };
}

bwrapTest("bwrapArgvFor() runs the program without a shell, stdout and stderr apart", async () => {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const listed = await runInBwrap(plan, ["ls", "-d", box.ws, "/no/such/path"]);
    equal(listed.stdout, `${box.ws}\n`);
    match(listed.stderr, /\/no\/such\/path/);
    ok(!listed.stdout.includes("/no/such/path"), "stderr stays out of stdout");
    ok(listed.code !== 0);
    const printed = await runInBwrap(plan, ["printf", "%s|", "a b", "$HOME", "*", "; true"]);
    equal(printed.stdout, "a b|$HOME|*|; true|");
    equal(printed.code, 0);
  });
});

bwrapTest("bwrapArgvFor() lets the program write only inside the writable roots", async () => {
  await withBox(async (box) => {
    const plan = await planFor(box);
    const outside = await runInBwrap(plan, ["touch", join(box.outside, "new.txt")]);
    ok(outside.code !== 0, "touch outside the writable roots fails");
    match(outside.stderr, /Read-only file system/);
    equal(await exists(join(box.outside, "new.txt")), false);
    const inside = await runInBwrap(plan, ["touch", join(box.ws, "new.txt")]);
    equal(inside.code, 0, inside.stderr);
    equal(await exists(join(box.ws, "new.txt")), true);
  });
});

bwrapTest("bwrapArgvFor() keeps environment values off the command line", async () => {
  const secret = "tok-not-on-cmdline-7f3a";
  const plan = { ...PLAN, env: { TOKEN: secret } };
  const args = bwrapArgvFor(plan, ["printenv", "TOKEN"]);
  ok(!args.includes("--clearenv") && !args.includes("--setenv"));
  ok(!args.join(" ").includes(secret));
  await withBox(async (box) => {
    const boxPlan = await planFor(box);
    const result = await new Deno.Command("bwrap", {
      args: bwrapArgvFor(boxPlan, ["printenv", "TOKEN"]),
      clearEnv: true,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", TOKEN: secret },
      stdin: "null",
    }).output();
    equal(new TextDecoder().decode(result.stdout).trim(), secret, "the program gets bwrap's env");
  });
});
