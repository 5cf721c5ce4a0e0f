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
