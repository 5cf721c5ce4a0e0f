/**
 * What a project's `.tern/config.jsonc` may set of `diagnostics` and `limits`: only what narrows
 * what tern does, and a refusal names the key and why.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { DEFAULT_LIMITS } from "../../src/config/schema.ts";
import { withFixture } from "./_fixture.ts";

async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  throw new assert.AssertionError({ message: "loadConfig() did not reject" });
}

const SUFFIX = "; a project's files may only narrow what tern does, so set it in your user " +
  "config (~/.tern/config.jsonc)";

Deno.test("loadConfig() lets a project turn diagnostics off, and nothing else of them", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write(
      "home/.tern/config.jsonc",
      `{ "diagnostics": { "languageServers": ["deno"], "timeoutMs": 9000 } }`,
    );
    write("cwd/.tern/config.jsonc", `{ "diagnostics": { "enabled": false } }`);
    const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.diagnostics?.enabled, false);
    assert.equal(sources.diagnostics.layer, "project");

    const refusals: Array<[string, string]> = [
      [
        `{ "checkers": [{ "name": "x", "extensions": [".ts"], "command": "touch pwned" }] }`,
        `it names commands tern runs without asking ("checkers")`,
      ],
      [
        `{ "languageServers": ["gopls"] }`,
        `it names commands tern runs without asking ("languageServers")`,
      ],
      // Off today, but the commands would be in the config for anything that turns it on.
      [
        `{ "enabled": false, "checkers": [{ "name": "x", "extensions": [".ts"], "command": "touch pwned" }] }`,
        `it names commands tern runs without asking ("checkers")`,
      ],
      [
        `{ "enabled": false, "languageServers": ["gopls"] }`,
        `it names commands tern runs without asking ("languageServers")`,
      ],
      [`{ "enabled": true, "timeoutMs": 5 }`, `it would replace your own "diagnostics" whole`],
      [`{ "languageServers": false }`, `it would replace your own "diagnostics" whole`],
    ];
    for (const [value, why] of refusals) {
      const file = write("cwd/.tern/config.jsonc", `{ "diagnostics": ${value} }`);
      const error = await rejection(loadConfig({ cwd, env: { HOME: home } }));
      assert.equal(
        error.message,
        `Refusing "diagnostics" in "${file}": ${why}, and a project may only turn diagnostics ` +
          `off ({"enabled": false})${SUFFIX}; it is at line 1, column 3`,
      );
      assert.equal(error.key, "diagnostics");
    }
  });
});

Deno.test("loadConfig() refuses a project's limit above the default, naming the limit and the default", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write(
      "cwd/.tern/config.jsonc",
      `{ "limits": { "cpuSeconds": 5, "processes": 4096 } }`,
    );
    const error = await rejection(loadConfig({ cwd, env: { HOME: home } }));
    assert.equal(
      error.message,
      `Refusing "limits" in "${file}": limits.processes 4096 is more than the default 1024` +
        `${SUFFIX}; it is at line 1, column 3`,
    );
    assert.equal(error.key, "limits");

    // The default itself, and anything lower, is the project's to set.
    write("cwd/.tern/config.jsonc", `{ "limits": { "cpuSeconds": 5, "processes": 1024 } }`);
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config.limits, { ...DEFAULT_LIMITS, cpuSeconds: 5 });

    // The person's own file may raise one; the project then cannot (nor refuse a raise).
    write("home/.tern/config.jsonc", `{ "limits": { "processes": 4096 } }`);
    write("cwd/.tern/config.jsonc", "{}");
    assert.equal((await loadConfig({ cwd, env: { HOME: home } })).config.limits.processes, 4096);
  });
});

Deno.test("loadConfig() lets a project's profile narrow the person's, never widen it", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const profileOf = async () => {
      const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
      return [config.profile, sources.profile?.layer];
    };
    const cases: Array<[string | undefined, string, string, string, string]> = [
      // [the person's profile, the project's, where: file or .env, expected, its layer]
      [":read-only", ":workspace", "file", ":read-only", "user"],
      [":read-only", ":workspace", "env", ":read-only", "user"],
      [":read-only", ":read-only", "file", ":read-only", "project"],
      [undefined, ":read-only", "file", ":read-only", "project"],
      [":workspace", ":read-only", "env", ":read-only", "dotenv"],
      [":external", ":workspace", "file", ":workspace", "project"],
      // A custom profile of the person's: tern cannot order it against a built-in one.
      ["mine", ":read-only", "file", "mine", "user"],
      ["mine", ":workspace", "env", "mine", "user"],
    ];
    for (const [person, project, where, expected, layer] of cases) {
      const profiles = `"profiles": { "mine": { "read": ["."] } }`;
      write(
        "home/.tern/config.jsonc",
        person === undefined ? "{}" : `{ ${profiles}, "profile": ${JSON.stringify(person)} }`,
      );
      write("cwd/.tern/config.jsonc", where === "file" ? `{ "profile": "${project}" }` : "{}");
      write("cwd/.env", where === "env" ? `TERN_PROFILE=${project}\n` : "");
      assert.deepEqual(await profileOf(), [expected, layer], `${person} then ${project}`);
    }
    // The person's own variable or flag still chooses whatever they like.
    write("home/.tern/config.jsonc", `{ "profile": ":read-only" }`);
    write("cwd/.tern/config.jsonc", `{ "profile": ":workspace" }`);
    const { config } = await loadConfig({
      cwd,
      env: { HOME: home, TERN_PROFILE: ":workspace" },
    });
    assert.equal(config.profile, ":workspace");
  });
});
