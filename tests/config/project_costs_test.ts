/**
 * Settings that spend the person's money or time, or widen what is sent: a project's
 * `.tern/config.jsonc` and `.env` (they come with a cloned repository) may lower them, never
 * raise them, and a project's value the person's own narrower one beats is ignored out loud.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { SETTING_KEYS, type SettingKey, settingOf } from "../../src/config/settings.ts";
import { withFixture } from "./_fixture.ts";

async function rejection(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail("loadConfig() did not reject");
}

function valueOf(config: object, key: SettingKey): unknown {
  return (config as Record<string, unknown>)[key];
}

/** Per key: a value a project may not give, one it may, and one narrower still. */
const CASES: Array<[SettingKey, wide: unknown, allowed: unknown, narrower: unknown]> = [
  ["maxRounds", 26, 25, 3],
  ["maxTokens", 8193, 8192, 1000],
  ["thinking", "high", "medium", "low"],
  ["reviewTimeoutMs", 30_001, 30_000, 1_000],
  ["requestTimeoutMs", 1_800_001, 1_800_000, 60_000],
  ["idleTimeoutMs", 120_001, 120_000, 10_000],
  ["contextWindow", 128_001, 128_000, 32_000],
  ["compactAt", 0.9, 0.8, 0.5],
  ["toolResultChars", 30_001, 30_000, 5_000],
  ["memoryFacts", 6, 5, 1],
  ["maxRetries", 5, 4, 1],
  ["retryBaseMs", 501, 500, 100],
  ["mcpToolSearch", "never", "auto", "always"],
];

/** Keys a project may set as it likes, each for a reason given beside it in the table. */
const HARMLESS = ["model", "provider", "baseUrl", "temperature", "bashTimeoutMs"];

Deno.test("the settings table lets a project set freely only the keys that cost nothing", () => {
  const free = SETTING_KEYS.filter((key) => settingOf(key).project === true);
  assert.deepEqual(free.sort(), [...HARMLESS].sort(), "a key a project may set was added");
});

Deno.test("loadConfig() refuses a project's file or .env raising a key that spends the person's money or time", async () => {
  for (const [key, wide, allowed] of CASES) {
    await withFixture(async ({ home, cwd, write }) => {
      const file = write("cwd/.tern/config.jsonc", JSON.stringify({ [key]: wide }));
      const error = await rejection(loadConfig({ cwd, env: { HOME: home } }));
      assert.equal(error.key, key);
      assert.ok(error.message.startsWith(`Refusing "${key}" in "${file}": `), error.message);
      assert.match(error.message, /a project's files may only narrow what tern does/);
      // The person's own file may raise it.
      Deno.mkdirSync(`${home}/.tern`);
      Deno.renameSync(file, `${home}/.tern/config.jsonc`);
      assert.equal(valueOf((await loadConfig({ cwd, env: { HOME: home } })).config, key), wide);
      Deno.removeSync(`${home}/.tern/config.jsonc`);

      const [variable] = settingOf(key).env!;
      const dotenv = write("cwd/.env", `${variable}=${wide}\n`);
      const refused = await rejection(loadConfig({ cwd, env: { HOME: home } }));
      assert.ok(refused.message.startsWith(`Refusing "${key}" in "${dotenv}": `));
      // The same variable from the person's environment is theirs.
      Deno.removeSync(dotenv);
      const own = await loadConfig({ cwd, env: { HOME: home, [variable]: String(wide) } });
      assert.equal(valueOf(own.config, key), wide);

      // Up to the default, it is the project's to set.
      write("cwd/.env", `${variable}=${allowed}\n`);
      const { config, sources } = await loadConfig({ cwd, env: { HOME: home } });
      assert.equal(valueOf(config, key), allowed, key);
      assert.equal(sources[key].layer, "dotenv");
    });
  }
});

Deno.test("loadConfig() keeps the person's narrower value over a project's, and says which was ignored", async () => {
  const cases: Array<[SettingKey, unknown, unknown]> = [
    ...CASES.map(([key, , allowed, narrower]) =>
      [key, allowed, narrower] as [
        SettingKey,
        unknown,
        unknown,
      ]
    ),
    ["subagentPrestart", true, false],
  ];
  for (const [key, project, person] of cases) {
    await withFixture(async ({ home, cwd, write }) => {
      const own = write("home/.tern/config.jsonc", JSON.stringify({ [key]: person }));
      const file = write("cwd/.tern/config.jsonc", JSON.stringify({ [key]: project }));
      const warnings: string[] = [];
      const load = () => loadConfig({ cwd, env: { HOME: home }, warn: (t) => warnings.push(t) });
      const { config, sources } = await load();
      assert.equal(valueOf(config, key), person, key);
      assert.equal(sources[key].layer, "user");
      assert.deepEqual(warnings, [
        `Ignoring "${key}" ${JSON.stringify(project)} from project config "${file}": it is ` +
        `not narrower than ${JSON.stringify(person)} (user config "${own}"), and a project's ` +
        "files may only narrow it",
      ]);

      // From the project's .env too, naming the variable.
      write("cwd/.tern/config.jsonc", "{}");
      const [variable] = settingOf(key).env!;
      const dotenv = write("cwd/.env", `${variable}=${project}\n`);
      warnings.length = 0;
      assert.equal(valueOf((await load()).config, key), person, key);
      assert.equal(warnings.length, 1);
      assert.ok(warnings[0].startsWith(`Ignoring "${key}" `), warnings[0]);
      assert.ok(warnings[0].includes(`from ${variable} in "${dotenv}"`), warnings[0]);

      // A project's value narrower than the person's is taken, without a word.
      Deno.removeSync(dotenv);
      write("home/.tern/config.jsonc", JSON.stringify({ [key]: project }));
      write("cwd/.tern/config.jsonc", JSON.stringify({ [key]: person }));
      warnings.length = 0;
      assert.equal(valueOf((await load()).config, key), person, key);
      assert.deepEqual(warnings, []);
    });
  }
});

Deno.test("loadConfig() says when a project's profile is ignored for the person's narrower one", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    write("home/.tern/config.jsonc", `{ "profile": ":read-only" }`);
    const file = write("cwd/.tern/config.jsonc", `{ "profile": ":workspace" }`);
    const warnings: string[] = [];
    const { config } = await loadConfig({
      cwd,
      env: { HOME: home },
      warn: (text) => warnings.push(text),
    });
    assert.equal(config.profile, ":read-only");
    assert.equal(warnings.length, 1);
    assert.ok(
      warnings[0].startsWith(`Ignoring "profile" ":workspace" from project config "${file}"`),
      warnings[0],
    );
  });
});

Deno.test("loadConfig() refuses a project's model row with a window wider than contextWindow may be", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write(
      "cwd/.tern/config.jsonc",
      JSON.stringify({ models: { "gpt-4.1-mini": { contextWindow: 1_000_000 } } }),
    );
    const error = await rejection(loadConfig({ cwd, env: { HOME: home } }));
    assert.ok(
      error.message.startsWith(
        `Refusing "models" in "${file}": models.gpt-4.1-mini.contextWindow 1000000 is more ` +
          "than the default contextWindow 128000; ",
      ),
      error.message,
    );
    // A narrower window, and the other facts of a model, are the project's to give.
    write(
      "cwd/.tern/config.jsonc",
      JSON.stringify({ models: { "gpt-4.1-mini": { contextWindow: 64_000, tools: true } } }),
    );
    const { config } = await loadConfig({ cwd, env: { HOME: home } });
    assert.equal(config.models["gpt-4.1-mini"].contextWindow, 64_000);
  });
});
