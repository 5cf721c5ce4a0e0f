/**
 * `./run.sh install` with arguments a new user might give: --help prints the usage, a mistyped
 * or incomplete argument is refused (exit 2) before anything is written, and a relative --root
 * is installed, and named in the PATH line, as an absolute folder.
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../support/tern_process.ts";

const decoder = new TextDecoder();

function install(args: string[], cwd: string, home: string): Promise<Deno.CommandOutput> {
  return new Deno.Command(join(ROOT, "bin/install"), {
    args,
    cwd,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
}

Deno.test("bin/install --help and bad arguments install nothing", async () => {
  const home = await Deno.makeTempDir({ prefix: "tern-install-home-" });
  try {
    const help = await install(["--help"], home, home);
    equal(help.code, 0, decoder.decode(help.stderr));
    match(decoder.decode(help.stdout), /^Usage: bin\/install \[--root DIR\]/);
    for (const args of [["--bogus"], ["--root"], ["--root", ""], ["--root", "x", "extra"]]) {
      const out = await install(args, home, home);
      equal(out.code, 2, args.join(" "));
      match(decoder.decode(out.stderr), /^tern: (unknown argument|--root requires a folder)/);
      equal(decoder.decode(out.stdout), "", args.join(" "));
    }
    deepEqual(await Array.fromAsync(Deno.readDir(home)), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("bin/install --root with a relative folder installs it as an absolute one", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-install-rel-" }));
  try {
    const out = await install(["--root", "tools"], dir, dir);
    equal(out.code, 0, decoder.decode(out.stderr));
    const stdout = decoder.decode(out.stdout);
    match(stdout, new RegExp(`^installed: ${join(dir, "tools", "bin", "tern")}$`, "m"));
    match(stdout, new RegExp(`export PATH="${join(dir, "tools", "bin")}:\\$PATH"`));
    equal((await Deno.stat(join(dir, "tools", "bin", "tern"))).isFile, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
