/**
 * Adversarial shell commands against real bubblewrap: writes outside the workspace, git
 * folders, secrets and environment injection. Each test also checks (attackTest) that nothing
 * outside the writable roots changed and that no process is left.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { attackTest, exists } from "./_bwrap_helpers.ts";

const READ_ONLY = /Read-only file system/;

attackTest("bwrap runner refuses writes to /etc", async ({ run, mark }) => {
  const target = `/etc/tern_${mark}`;
  const result = await run(`echo x > ${target}`);
  ok(result.code !== 0 && READ_ONLY.test(result.output), result.output);
  ok(!(await exists(target)));
});

attackTest("bwrap runner refuses writes to $HOME", async ({ run, box }) => {
  const result = await run("echo evil >> ~/.bashrc; touch ~/new_file; echo done");
  equal(result.output.match(/Read-only file system/g)?.length, 2, result.output);
  ok(result.output.endsWith("done\n"));
  ok(!(await exists(join(box.home, "new_file"))));
});

attackTest("bwrap runner refuses writes to a sibling folder", async ({ run, box }) => {
  const result = await run("echo evil >> ../outside/secret.txt; cp README.md ../outside/");
  equal(result.output.match(/Read-only file system/g)?.length, 2, result.output);
  ok(!(await exists(join(box.outside, "README.md"))));
});

attackTest(
  "bwrap runner writes the workspace and a private /tmp only",
  async ({ run, box, mark }) => {
    const result = await run(
      `echo a > new.txt && echo b > /tmp/tern_${mark} && cat /tmp/tern_${mark} && echo ok`,
    );
    equal(result.output, "b\nok\n");
    equal(await Deno.readTextFile(join(box.ws, "new.txt")), "a\n");
    ok(!(await exists(join(box.tmp, `tern_${mark}`))), "a host tmp directory was written");
    ok(!(await exists(`/tmp/tern_${mark}`)), "the host's /tmp was written");
  },
);

attackTest(
  "bwrap runner does not let a symlink in the workspace write outside",
  async ({ run }) => {
    const result = await run(
      "ln -s ../outside/secret.txt link && echo evil >> link; ln -s /etc/hostname h && echo x >> h",
    );
    equal(result.output.match(/Read-only file system/g)?.length, 2, result.output);
  },
);

attackTest("bwrap runner does not let a hard link reach outside", async ({ run, box }) => {
  const result = await run("ln ../outside/secret.txt hl");
  ok(result.code !== 0 && /Invalid cross-device link/.test(result.output), result.output);
  ok(!(await exists(join(box.ws, "hl"))));
});

attackTest("bwrap runner refuses writes through /proc/self/root", async ({ run, mark }) => {
  const result = await run(`echo x > /proc/self/root/etc/tern_${mark}`);
  ok(result.code !== 0 && READ_ONLY.test(result.output), result.output);
  ok(!(await exists(`/etc/tern_${mark}`)));
});

attackTest("bwrap runner refuses writes to .git/hooks", async ({ run, box }) => {
  const result = await run("echo evil > .git/hooks/post-checkout; chmod 777 .git/hooks/pre-commit");
  ok(READ_ONLY.test(result.output) && result.code !== 0, result.output);
  ok(!(await exists(join(box.ws, ".git/hooks/post-checkout"))));
});

attackTest("bwrap runner refuses writes to .git/config", async ({ run, box }) => {
  const result = await run(
    'printf "[core]\\n\\thooksPath = /tmp\\n" >> .git/config; sed -i s/core/x/ .git/config',
  );
  equal(result.output.match(/Read-only file system/g)?.length, 2, result.output);
  equal(await Deno.readTextFile(join(box.ws, ".git/config")), "[core]\n");
});

attackTest(
  "bwrap runner protects the .git of nested repositories and worktrees",
  async ({ run }) => {
    const result = await run(
      "echo evil > sub/.git/hooks/post-checkout; echo evil >> sub/.git/config; " +
        "echo 'gitdir: /tmp/evil' > wt/.git",
    );
    equal(result.output.match(/Read-only file system/g)?.length, 3, result.output);
  },
);

attackTest("bwrap runner cannot remove or move .git", async ({ run, box }) => {
  const result = await run("rm -rf .git; mv .git moved; mv sub/.git sub/moved; ls -A .git");
  ok(/cannot remove/.test(result.output), result.output);
  ok(/Device or resource busy|Read-only file system/.test(result.output), result.output);
  ok(/^HEAD\nconfig\nhooks\n$/m.test(result.output), result.output);
  ok(await exists(join(box.ws, ".git/hooks/pre-commit")));
  ok(!(await exists(join(box.ws, "moved"))));
});

attackTest("bwrap runner hides ~/.ssh, ~/.netrc and ~/.aws", async ({ run }) => {
  const result = await run(
    "cat ~/.ssh/id_rsa; ls -A ~/.ssh; cat ~/.netrc; cat ~/.aws/credentials; echo end",
  );
  for (const secret of ["PRIVATE-KEY-CONTENT", "NETRC-PASSWORD", "AWS-SECRET", "id_rsa\n"]) {
    ok(!result.output.includes(secret), `${secret} leaked:\n${result.output}`);
  }
  ok(result.output.endsWith("end\n"), result.output);
});

attackTest("bwrap runner hides a secret folder that is a symlink, at both paths", async (a) => {
  const result = await a.run("cat ~/.config/gh/hosts.yml ../outside/gh/hosts.yml; echo end");
  ok(!result.output.includes("GH-TOKEN"), result.output);
  ok(result.output.endsWith("end\n"), result.output);
}, async (box) => {
  await Deno.mkdir(join(box.outside, "gh"));
  await Deno.writeTextFile(join(box.outside, "gh/hosts.yml"), "oauth_token: GH-TOKEN\n");
  await Deno.mkdir(join(box.home, ".config"));
  await Deno.symlink(join(box.outside, "gh"), join(box.home, ".config/gh"));
  return {};
});

attackTest("bwrap runner cannot create files in a hidden folder", async ({ run, box }) => {
  const result = await run("echo key > ~/.ssh/authorized_keys");
  ok(READ_ONLY.test(result.output), result.output);
  ok(!(await exists(join(box.home, ".ssh/authorized_keys"))));
});

const KEYS = {
  OPENAI_API_KEY: "sk-openai-value",
  TERN_API_KEY: "sk-tern-value",
  ANTHROPIC_API_KEY: "sk-ant-value",
  GITHUB_TOKEN: "ghp-value",
  AWS_SECRET_ACCESS_KEY: "aws-value",
  DB_PASSWORD: "hunter2-value",
};

attackTest("bwrap runner passes no API keys into the command", async ({ run }) => {
  const result = await run("env");
  for (const [name, value] of Object.entries(KEYS)) {
    ok(!result.output.includes(name) && !result.output.includes(value), result.output);
  }
  ok(/^PATH=/m.test(result.output) && /^TMPDIR=\/tmp$/m.test(result.output), result.output);
}, (box) => ({ source: { PATH: "/usr/bin:/bin", HOME: box.home, ...KEYS } }));

/** Variables that would run code if they reached the command (BASH_ENV is read by `bash -c`). */
function injectors(box: { outside: string }): Record<string, string> {
  return {
    LD_PRELOAD: "/nonexistent/evil.so",
    LD_LIBRARY_PATH: "/nonexistent",
    BASH_ENV: join(box.outside, "evil.sh"),
    ENV: join(box.outside, "evil.sh"),
    PROMPT_COMMAND: "echo INJECTED",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "core.pager",
    GIT_CONFIG_VALUE_0: "echo INJECTED",
    NODE_OPTIONS: "--require /nonexistent/evil.js",
    PERL5OPT: "-e print'INJECTED'",
  };
}

const INJECTED_NAMES = /^(LD_|BASH_ENV|ENV=|PROMPT_COMMAND|GIT_|NODE_OPTIONS|PERL5OPT)/m;

attackTest("bwrap runner drops code-injecting variables from the source env", async (attack) => {
  await Deno.writeTextFile(join(attack.box.outside, "evil.sh"), "echo INJECTED\n");
  const result = await attack.run("env");
  ok(!INJECTED_NAMES.test(result.output), result.output);
  ok(!/INJECTED|ld\.so/.test(result.output), result.output);
  await Deno.remove(join(attack.box.outside, "evil.sh"));
}, (box) => ({ source: { PATH: "/usr/bin:/bin", HOME: box.home, ...injectors(box) } }));

attackTest("bwrap runner drops code-injecting variables even when the plan has them", async (a) => {
  await Deno.writeTextFile(join(a.box.outside, "evil.sh"), "echo INJECTED\n");
  const result = await a.run("env");
  ok(!INJECTED_NAMES.test(result.output), result.output);
  ok(!/INJECTED|ld\.so/.test(result.output), result.output);
  await Deno.remove(join(a.box.outside, "evil.sh"));
}, (box) => ({ env: { PATH: "/usr/bin:/bin", HOME: box.home, ...injectors(box) } }));
