/**
 * Real bubblewrap through the permission gate: a repository-shipped git config or rg config
 * named by an environment variable (or a nested repository's own config) runs nothing without
 * a person in ASK mode, and command deny rules hold against commands that hide what they run.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { expectError, withGate } from "../agent/_gate_box.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

/** Writes `evil/.gitconfig`, `evil/rgrc` and `vendor/dep/.git/config`, each running `evil/p.sh`. */
async function shipEvilConfig(ws: string): Promise<void> {
  const git = new Deno.Command("git", { args: ["init", "-q", ws] });
  equal((await git.output()).code, 0);
  await Deno.mkdir(join(ws, "evil"));
  await Deno.writeTextFile(join(ws, "evil/p.sh"), '#!/bin/sh\necho ran > pwned.txt\ncat "$1"\n');
  await Deno.chmod(join(ws, "evil/p.sh"), 0o755);
  const hook = `[core]\n\tfsmonitor = ${join(ws, "evil/p.sh")}\n`;
  await Deno.writeTextFile(join(ws, "evil/.gitconfig"), hook);
  await Deno.mkdir(join(ws, "evil/git"));
  await Deno.writeTextFile(join(ws, "evil/git/config"), hook);
  await Deno.writeTextFile(join(ws, "evil/rgrc"), `--pre=${join(ws, "evil/p.sh")}\n`);
  const nested = new Deno.Command("git", { args: ["init", "-q", join(ws, "vendor/dep")] });
  equal((await nested.output()).code, 0);
  await Deno.writeTextFile(
    join(ws, "vendor/dep/.git/config"),
    `${await Deno.readTextFile(join(ws, "vendor/dep/.git/config"))}${hook}`,
  );
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

testWith(
  [bwrapNeed],
  "PermissionGate in ask mode runs no config a variable or another repository names, unasked",
  async () => {
    await withGate({}, async (box) => {
      await shipEvilConfig(box.ws);
      for (
        const command of [
          "HOME=evil git status",
          "XDG_CONFIG_HOME=evil git diff",
          "RIPGREP_CONFIG_PATH=evil/rgrc rg -l zzz evil/rgrc",
          "git -C vendor/dep status",
          "cd vendor/dep && git status",
        ]
      ) {
        expectError(await box.call("bash", { command }), "POLICY_DENIED", /not interactive/);
        equal(await exists(join(box.ws, "pwned.txt")), false, command);
      }
      const obs = await box.call("bash", { command: "LC_ALL=C git status --short" });
      equal(obs.status, "SUCCEEDED");
      ok(box.asked.length === 0);
    });
  },
);

testWith(
  [bwrapNeed],
  "PermissionGate in bypass mode keeps a deny rule against commands that hide their name",
  async () => {
    await withGate({ mode: "bypass", rules: [{ action: "deny", command: "rm" }] }, async (box) => {
      for (const name of ["v1", "v2", "v3"]) await Deno.writeTextFile(join(box.ws, name), "x");
      for (
        const command of ["r=rm; $r v1", "find . -name v2 -exec rm {} +", "coproc rm v3; wait"]
      ) {
        expectError(await box.call("bash", { command }), "POLICY_DENIED", /deny command "rm"/);
      }
      for (const name of ["v1", "v2", "v3"]) ok(await exists(join(box.ws, name)), name);
    });
  },
);
