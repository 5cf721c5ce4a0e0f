/**
 * tern's home holds the person's own config, where a project's limits do not apply. A relative
 * TERN_HOME or HOME would put it in the folder tern starts in, the workspace: a repository that
 * ships `<that folder>/config.jsonc` would set the review mode, the profile or `noSandbox`.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
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
