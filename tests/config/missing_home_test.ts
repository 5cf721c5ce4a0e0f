/**
 * tern makes no folder the person did not mean: of tern homes not there yet, only `.tern` in a
 * HOME that exists is made (a new user's first run). A missing HOME, or a TERN_HOME that is not
 * there (most likely mistyped), is refused, naming the variable and the path.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("loadConfig() refuses a HOME or TERN_HOME that does not exist, naming it", async () => {
  await withFixture(async ({ root, home, cwd }) => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ HOME: join(root, "gone") }, "HOME", /^HOME ".*\/gone" does not exist: /],
      [
        { HOME: home, TERN_HOME: join(root, "typo", ".tern") },
        "TERN_HOME",
        /^TERN_HOME ".*\/typo\/\.tern" does not exist: .*correct TERN_HOME$/,
      ],
      // Its folder exists, but it is not the default one: still most likely a typo.
      [{ HOME: home, TERN_HOME: join(home, ".trn") }, "TERN_HOME", /^TERN_HOME ".*\/\.trn" /],
      [{ TERN_HOME: join(root, "gone", ".tern") }, "TERN_HOME", /^TERN_HOME /],
    ];
    for (const [env, variable, message] of cases) {
      await assert.rejects(loadConfig({ cwd, env }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.equal(error.key, variable);
        assert.match(error.message, message);
        return true;
      });
    }
    await assert.rejects(loadConfig({ cwd, env: {}, home: join(root, "gone") }), /^.*HOME/);
    assert.equal(await exists(join(root, "gone")), false);
    assert.equal(await exists(join(root, "typo")), false);
  });
});

Deno.test("loadConfig() accepts ~/.tern not made yet in an existing HOME, and makes nothing", async () => {
  await withFixture(async ({ root, home, cwd }) => {
    const ternHome = join(home, ".tern");
    for (const env of [{ HOME: home }, { HOME: home, TERN_HOME: ternHome }]) {
      const { config } = await loadConfig({ cwd, env });
      assert.equal(config.ternHome, ternHome);
    }
    assert.equal(await exists(ternHome), false);
    // An existing TERN_HOME needs no HOME at all.
    const { config } = await loadConfig({
      cwd,
      env: { HOME: join(root, "gone"), TERN_HOME: home },
    });
    assert.equal(config.ternHome, home);
  });
});
