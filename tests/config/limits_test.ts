import assert from "node:assert/strict";
import { loadConfig } from "../../src/config/mod.ts";
import { DEFAULT_LIMITS } from "../../src/config/schema.ts";
import { withFixture } from "./_fixture.ts";

Deno.test("loadConfig() gives every shell command the default limits", async () => {
  await withFixture(async ({ home, cwd }) => {
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config.limits, DEFAULT_LIMITS);
  });
});

Deno.test("loadConfig() lets the user raise limits and a project only lower them", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", `{ "limits": { "memoryMb": 16384, "tmpMb": 64 } }`);
    // Above the person's lower tmpMb but not above the default: the lower value stays. (Above
    // the default is refused: project_narrowing_test.ts.)
    write("cwd/.tern/config.jsonc", `{ "limits": { "tmpMb": 512, "cpuSeconds": 5 } }`);
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.deepEqual(config.limits, {
      ...DEFAULT_LIMITS,
      memoryMb: 16384,
      tmpMb: 64,
      cpuSeconds: 5,
    });
  });
});

Deno.test("loadConfig() rejects a limit that is not a positive integer or not known", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", `{ "limits": { "processes": 0 } }`);
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), /limits\.processes/);
    write("home/.tern/config.jsonc", `{ "limits": { "threads": 5 } }`);
    await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), /threads/);
  });
});
