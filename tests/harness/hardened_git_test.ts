import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runGit } from "../../src/harness/hardened_git.ts";

Deno.test("runGit() starts no transport or remote helper a repository names", async () => {
  const repo = await Deno.makeTempDir({ prefix: "tern-git-transport-" });
  const markers = await Deno.makeTempDir({ prefix: "tern-pwned-" });
  const marker = (name: string) => join(markers, name);
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: repo, stdout: "null", stderr: "null" }).output();
  try {
    await git("init", "-q", ".");
    await git("config", "protocol.allow", "always");
    await git("config", "protocol.ext.allow", "always");
    await git("config", "protocol.file.allow", "always");
    await git("config", "remote.ext.url", `ext::sh -c touch% ${marker("ext")}`);
    await git("config", "remote.file.url", repo);
    await git("config", "remote.file.uploadpack", `touch ${marker("uploadpack")}; false`);
    await git("config", "remote.ssh.url", "ssh://example.invalid/x");
    await git("config", "core.sshCommand", `touch ${marker("ssh")}; false`);
    const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
    for (const remote of ["ext", "file", "ssh"]) {
      for (const args of [["fetch", remote], ["ls-remote", remote]]) {
        const result = await runGit(args, { cwd: repo, env });
        ok(result !== undefined);
        equal(result.code === 0, false, `git ${args.join(" ")} succeeded`);
      }
    }
    deepEqual(await Array.fromAsync(Deno.readDir(markers)), []);

    // The traps are real: plain git springs them.
    for (const remote of ["ext", "file", "ssh"]) await git("ls-remote", remote);
    equal((await Array.fromAsync(Deno.readDir(markers))).length, 3);
  } finally {
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(markers, { recursive: true });
  }
});

Deno.test("runGit() runs git again when a signal meant for tern's group ended it", async () => {
  const repo = await Deno.makeTempDir({ prefix: "tern-git-signal-" });
  const runs = join(repo, "runs");
  // A launcher that counts its runs and, as `signal` listed first, dies of it before git runs:
  // the moment before `setsid` when the terminal's Ctrl-C or hangup still reaches the child.
  const launcher = (signals: string[]) => [
    "sh",
    "-c",
    `echo run >> ${runs}; n=$(wc -l < ${runs}); set -- ${signals.join(" ")} - "$@"; ` +
    `s=$(eval echo \\\${$n}); [ "$s" != - ] && kill -$s $$; ` +
    `while [ "$1" != - ]; do shift; done; shift; exec "$@"`,
    "sh",
    Deno.env.get("PATH")?.split(":").map((dir) => join(dir, "git")).find((path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    }) ?? "/usr/bin/git",
  ];
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const count = () => {
    try {
      return Deno.readTextFileSync(runs).split("\n").length - 1;
    } catch {
      return 0;
    }
  };
  try {
    for (const signal of ["HUP", "INT", "TERM"]) {
      await Deno.remove(runs).catch(() => {});
      const result = await runGit(["version"], {
        cwd: repo,
        env,
        launcher: launcher([signal]),
      });
      equal(result?.code, 0, `${signal}: ${result?.stderr}`);
      equal(count(), 2, `${signal}: ran twice`);
    }

    // Only once: a second such signal is the answer.
    await Deno.remove(runs).catch(() => {});
    const twice = await runGit(["version"], {
      cwd: repo,
      env,
      launcher: launcher(["HUP", "HUP"]),
    });
    equal(twice?.code, 129);
    // An aborted run, or one ended by a signal tern does not expect, is not run again.
    await Deno.remove(runs).catch(() => {});
    const aborted = new AbortController();
    aborted.abort();
    const stopped = await runGit(["version"], {
      cwd: repo,
      env,
      launcher: launcher(["INT"]),
      signal: aborted.signal,
    });
    equal(stopped?.code === 0, false);
    ok(count() <= 1);
    await Deno.remove(runs).catch(() => {});
    const usr = await runGit(["version"], { cwd: repo, env, launcher: launcher(["USR1"]) });
    equal(usr?.code, 138);
    equal(count(), 1);
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});
