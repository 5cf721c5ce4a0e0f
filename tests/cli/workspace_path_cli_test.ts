/**
 * The workspace's path is checked before any command uses it: a folder whose path is not UTF-8
 * (which Deno cannot name) is refused with exit 2 and what to do, never an internal error; and
 * `tern config -C` refuses a folder that does not exist as every other command does.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { declaredFlags, ROOT, runTern, tempWorkspace } from "../support/tern_process.ts";

/** The folder's name: "d" and the byte 0xE9 (é in Latin-1), which is not UTF-8. */
const NAME = String.raw`d\xe9`;

/** Runs `bash -c script` in `cwd`, for what a string cannot name (paths that are not UTF-8). */
async function bash(script: string, cwd: string, args: string[] = [], env = {}) {
  const out = await new Deno.Command("bash", {
    args: ["-c", script, "bash", ...args],
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** `tern args` as tests start it (tern_process.ts), from inside the folder NAME under `dir`. */
function ternInside(dir: string, args: string[], env: Record<string, string>) {
  const command = [
    Deno.execPath(),
    "run",
    ...declaredFlags(env, { cwd: dir, args }),
    join(ROOT, "main.ts"),
    ...args,
  ];
  return bash(`cd "$(printf '${NAME}')" && exec "$@"`, dir, command, env);
}

Deno.test("tern in a folder whose path is not UTF-8 exits 2 saying so, for every command", async () => {
  const ws = await tempWorkspace();
  try {
    equal((await bash(`mkdir "$(printf '${NAME}')"`, ws.dir)).code, 0);
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "k" };
    for (const args of [["run", "x"], ["config"], ["sessions", "list"], ["doctor"], ["demo"]]) {
      const { code, stdout, stderr } = await ternInside(ws.dir, args, env);
      equal(code, 2, `${args.join(" ")}: ${stdout}${stderr}`);
      match(
        stderr,
        /^tern: Cannot use the current folder ".*\/d\\xE9" as the workspace: tern cannot work in a folder whose path is not UTF-8; rename it/m,
      );
      equal(stderr.includes("internal error"), false, stderr);
      equal(stderr.includes("    at "), false, "no stack trace");
    }
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern -C naming a folder whose path is not UTF-8 exits 2 saying so", async () => {
  const ws = await tempWorkspace();
  try {
    equal(
      (await bash(`mkdir "$(printf '${NAME}')" && ln -s "$(printf '${NAME}')" link`, ws.dir)).code,
      0,
    );
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    // Through a link: the real path is not UTF-8.
    const linked = await runTern(["config", "-C", join(ws.dir, "link")], { cwd: ws.dir, env });
    equal(linked.code, 2, linked.stdout);
    match(
      linked.stderr,
      /its real path ".*\/d\\xE9" is not UTF-8, and tern cannot work in a folder/,
    );
    // As an argument, the bytes arrive as U+FFFD: that folder is not found, and why is said.
    const named = await runTern(["sessions", "list", "-C", join(ws.dir, "d\uFFFD")], {
      cwd: ws.dir,
      env,
    });
    equal(named.code, 2, named.stdout);
    match(
      named.stderr,
      /not found \("\uFFFD" stands for bytes that are not UTF-8, and tern cannot/,
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern config -C refuses a folder that does not exist, as every command does", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home };
    const missing = join(ws.dir, "nonexistent");
    for (const command of ["config", "doctor"]) {
      const { code, stdout, stderr } = await runTern([command, "-C", missing], {
        cwd: ws.dir,
        env,
      });
      equal(code, 2, `${command}: ${stdout}`);
      match(stderr, /Cannot use workspace ".*\/nonexistent": not found/);
      equal(stdout, "");
    }
    // And it reads the project's own layer of the folder it names.
    await Deno.mkdir(join(ws.dir, "p", ".tern"), { recursive: true });
    await Deno.writeTextFile(join(ws.dir, "p", ".tern", "config.jsonc"), '{ "maxRounds": 7 }');
    const shown = await runTern(["config", "-C", join(ws.dir, "p")], { cwd: ws.dir, env });
    equal(shown.code, 0, shown.stderr);
    match(shown.stdout, /^maxRounds +7 +\(project config ".*\/p\/\.tern\/config\.jsonc"\)/m);
  } finally {
    await ws.cleanup();
  }
});
