/**
 * tern's home holds the person's own config, where a project's limits do not apply. A relative
 * TERN_HOME or HOME would put it in the folder tern starts in, the workspace: a repository that
 * ships `<that folder>/config.jsonc` would set the review mode, the profile or `noSandbox`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveWorkspace } from "../../src/cli/process_env.ts";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { repositoryHoldingHome } from "../../src/config/tern_home.ts";
import { withFixture } from "./_fixture.ts";

const WIDE = `{ "mode": "bypass", "noSandbox": true, "profile": ":danger-full-access" }`;

Deno.test("loadConfig() refuses a relative TERN_HOME or HOME, naming the variable", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/th/config.jsonc", WIDE);
    write("cwd/homedir/.tern/config.jsonc", WIDE);
    const cases: [Record<string, string>, string][] = [
      [{ HOME: home, TERN_HOME: "th" }, "TERN_HOME"],
      [{ HOME: home, TERN_HOME: "./th" }, "TERN_HOME"],
      [{ HOME: "homedir" }, "HOME"],
    ];
    for (const [env, variable] of cases) {
      await assert.rejects(loadConfig({ cwd, env }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.key, variable);
        assert.match(error.message, new RegExp(`^${variable} "[^"]+" is not an absolute path: `));
        return true;
      });
    }
    // An absolute one is read as ever, and HOME is not asked when TERN_HOME names the home.
    const { config } = await loadConfig({
      cwd,
      env: { HOME: "homedir", TERN_HOME: `${cwd}/../home` },
    });
    assert.equal(config.mode, "ask");
  });
});

Deno.test("loadConfig() takes tern's home from the environment only, never from a project's .env", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("cwd/planted/config.jsonc", WIDE);
    write("cwd/.tern/config.jsonc", "{}");
    write("cwd/.env", `TERN_HOME=${cwd}/planted\nHOME=${cwd}\n`);
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.ternHome, join(home, ".tern"));
    assert.deepEqual(sources.ternHome, { layer: "default" });
    assert.equal(config.mode, "ask");
    assert.equal(config.noSandbox, false);
  });
});

/** `fn()` with HOME and TERN_HOME set as `env` says (unset for undefined), put back after. */
function withHomeVariables<T>(env: { HOME?: string; TERN_HOME?: string }, fn: () => T): T {
  const names = ["HOME", "TERN_HOME"] as const;
  const before = names.map((name) => Deno.env.get(name));
  const set = (name: string, value: string | undefined) =>
    value === undefined ? Deno.env.delete(name) : Deno.env.set(name, value);
  for (const name of names) set(name, env[name]);
  try {
    return fn();
  } finally {
    names.forEach((name, at) => set(name, before[at]));
  }
}

Deno.test("resolveWorkspace() refuses a workspace in the git repository that holds HOME, unless TERN_HOME is set", async () => {
  await withFixture(async ({ root, home, cwd, write }) => {
    // A container's home that is the project's clone: its .tern would be the person's config.
    write("cwd/.tern/config.jsonc", WIDE);
    await Deno.mkdir(join(cwd, ".git"));
    Deno.mkdirSync(join(cwd, "sub"));
    assert.equal(repositoryHoldingHome(cwd, cwd), cwd);
    assert.equal(repositoryHoldingHome(cwd, join(cwd, "sub")), cwd);
    // A workspace above that holds the repository, home and all.
    assert.equal(repositoryHoldingHome(join(cwd, "sub"), root), cwd);
    for (
      const [workspace, homeFolder] of [[cwd, cwd], [join(cwd, "sub"), cwd], [
        cwd,
        join(cwd, "sub"),
      ]]
    ) {
      assert.throws(
        () => withHomeVariables({ HOME: homeFolder }, () => resolveWorkspace(workspace)),
        (error: Error) => {
          assert.equal(error.name, "InputError");
          assert.match(
            error.message,
            new RegExp(`it lies in the git repository "${cwd}" that holds HOME, .*set TERN_HOME=`),
          );
          return true;
        },
        `${workspace} with HOME ${homeFolder}`,
      );
    }
    // The person's own choice: TERN_HOME names it, wherever it lies.
    assert.equal(
      withHomeVariables({ HOME: cwd, TERN_HOME: join(cwd, ".tern") }, () => resolveWorkspace(cwd)),
      cwd,
    );
    // `cd ~ && tern` in a home that is no repository, and a project of its own in a home that
    // is one (dotfiles), work as ever.
    assert.equal(withHomeVariables({ HOME: home }, () => resolveWorkspace(home)), home);
    Deno.mkdirSync(join(root, ".git"));
    Deno.mkdirSync(join(home, "project", ".git"), { recursive: true });
    const project = join(home, "project");
    assert.equal(repositoryHoldingHome(home, project), null);
    assert.equal(withHomeVariables({ HOME: home }, () => resolveWorkspace(project)), project);
  });
});
