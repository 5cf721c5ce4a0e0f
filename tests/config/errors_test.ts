import assert from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { join } from "node:path";
import { ConfigError, loadConfig, type LoadConfigOptions } from "../../src/config/mod.ts";
import { TernError } from "../../src/core/errors.ts";
import { withFixture } from "./_fixture.ts";

/** Loads and returns the ConfigError it must throw. */
async function loadError(options: LoadConfigOptions): Promise<ConfigError> {
  try {
    await loadConfig(options);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    assert.ok(error instanceof TernError);
    assert.equal(exitCodeForError(error), 2);
    return error;
  }
  assert.fail("loadConfig() did not throw");
}

/** The error's public fields, for one deepEqual. */
function fields(error: ConfigError) {
  const { message, file, key, line, column } = error;
  return { message, file, key, line, column };
}

Deno.test("loadConfig() reports a JSONC syntax error with its line and column", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", `{\n  "model": "m"\n  "maxRounds": 3\n}\n`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Invalid config file "${file}": line 3, column 3: expected a comma`,
      file,
      key: undefined,
      line: 3,
      column: 3,
    });
  });
});

Deno.test("loadConfig() reports an unterminated value at the end of the file", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("home/.tern/config.jsonc", `{ "model": `);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.equal(
      error.message,
      `Invalid config file "${file}": line 1, column 12: expected a value`,
    );
  });
});

Deno.test("loadConfig() reports a wrongly typed value with its key and position", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", `{\n  "model": "m",\n  "maxRounds": "ten"\n}`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Invalid config file "${file}": line 3, column 16: key "maxRounds": ` +
        `expected an integer from 1 to 1000, got "ten"`,
      file,
      key: "maxRounds",
      line: 3,
      column: 16,
    });
  });
});

Deno.test("loadConfig() rejects out-of-range numbers and non-http URLs", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const cases: Array<[string, string]> = [
      [`{ "temperature": 2.5 }`, `key "temperature": expected a number from 0 to 2, got 2.5`],
      [`{ "maxTokens": 0 }`, `key "maxTokens": expected a positive integer, got 0`],
      [`{ "bashTimeoutMs": 1.5 }`, `key "bashTimeoutMs": expected an integer from 1 to 2147483647`],
      [`{ "model": "" }`, `key "model": expected a non-empty string, got ""`],
      [`{ "baseUrl": "ftp://x" }`, `key "baseUrl": expected an http or https URL, got "ftp://x"`],
      [`{ "maxRounds": [1] }`, `got an array`],
      [
        `{ "toolResultChars": 50000000 }`,
        `key "toolResultChars": expected an integer from 2000 to 1000000 (characters), got 50000000`,
      ],
    ];
    for (const [text, detail] of cases) {
      write("cwd/.tern/config.jsonc", text);
      const error = await loadError({ cwd, env: { HOME: home } });
      assert.ok(error.message.includes(detail), `${error.message} lacks ${detail}`);
      assert.equal(error.line, 1);
    }
  });
});

Deno.test("loadConfig() names an unknown key and suggests the one meant", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("home/.tern/config.jsonc", `{\n  "model": "m",\n    "maxRound": 3\n}`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Invalid config file "${file}": line 3, column 5: unknown key "maxRound": ` +
        `did you mean "maxRounds"?`,
      file,
      key: "maxRound",
      line: 3,
      column: 5,
    });

    write("home/.tern/config.jsonc", `{ "colour": "blue" }`);
    const other = await loadError({ cwd, env: { HOME: home } });
    assert.equal(
      other.message,
      `Invalid config file "${file}": line 1, column 3: unknown key "colour"`,
    );
  });
});

Deno.test("loadConfig() quotes a key name with a line break on the error's one line", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", `{ "x\\nok   sandbox    FORGED": 1 }`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.equal(
      error.message,
      `Invalid config file "${file}": line 1, column 3: unknown key "x\\nok   sandbox    FORGED"`,
    );
    write("cwd/.tern/config.jsonc", `{ "api\\nKey": 1 }`);
    const secret = await loadError({ cwd, env: { HOME: home } });
    assert.match(secret.message, /: key "api\\nKey": config files must not hold API keys/);
  });
});

Deno.test("loadConfig() says so when the top level is not an object", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", `// settings\n["model"]\n`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Invalid config file "${file}": line 2, column 1: ` +
        `expected an object at the top level, got an array`,
      file,
      key: undefined,
      line: 2,
      column: 1,
    });
  });
});

Deno.test("loadConfig() names a config file that cannot be read", async () => {
  await withFixture(async ({ home, cwd }) => {
    const file = join(cwd, ".tern", "config.jsonc");
    await Deno.mkdir(file, { recursive: true });
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Cannot read config file "${file}": is a directory`,
      file,
      key: undefined,
      line: undefined,
      column: undefined,
    });
  });
});

Deno.test("loadConfig() skips a .env that is a folder or a FIFO alike, with a warning naming it", async () => {
  await withFixture(async ({ home, cwd }) => {
    const file = join(cwd, ".env");
    // A folder named .env is often a Python virtual environment: no reason to stop.
    await Deno.mkdir(file);
    const warnings: string[] = [];
    const env = { HOME: home, TERN_MODEL: "m" };
    const { config } = await loadConfig({ cwd, env, warn: (text) => warnings.push(text) });
    assert.equal(config.model, "m");
    assert.deepEqual(warnings, [
      `Skipping .env file "${file}": it is a folder, not a regular file`,
    ]);
    // A FIFO is skipped the same way, never opened (a read would wait for a writer forever).
    await Deno.remove(file);
    const made = await new Deno.Command("mkfifo", { args: [file] }).output();
    assert.equal(made.code, 0);
    warnings.length = 0;
    await loadConfig({ cwd, env, warn: (text) => warnings.push(text) });
    assert.deepEqual(warnings, [`Skipping .env file "${file}": it is not a regular file`]);
  });
});

Deno.test("loadConfig() rejects an API key in a config file", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", `{\n  "model": "m",\n  "apiKey": "sk-in-file"\n}`);
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.equal(error.key, "apiKey");
    assert.equal(error.file, file);
    assert.deepEqual([error.line, error.column], [3, 3]);
    assert.match(error.message, /^Invalid config file ".+": line 3, column 3: key "apiKey": /);
    assert.match(error.message, /TERN_API_KEY in the environment or \.env/);
    assert.match(error.message, /"apiKeyEnv"/);
    assert.ok(!error.message.includes("sk-in-file"));

    write("cwd/.tern/config.jsonc", `{ "OPENAI_API_KEY": "sk-in-file" }`);
    const other = await loadError({ cwd, env: { HOME: home } });
    assert.equal(other.key, "OPENAI_API_KEY");
    assert.match(other.message, /must not hold API keys/);
  });
});

Deno.test("loadConfig() names a bad numeric environment variable and its value", async () => {
  await withFixture(async ({ home, cwd }) => {
    let error = await loadError({ cwd, env: { HOME: home, TERN_MAX_ROUNDS: "abc" } });
    assert.deepEqual(fields(error), {
      message: `Invalid environment variable TERN_MAX_ROUNDS: key "maxRounds": ` +
        `expected an integer from 1 to 1000, got "abc"`,
      file: undefined,
      key: "TERN_MAX_ROUNDS",
      line: undefined,
      column: undefined,
    });
    for (const [name, value] of [["TERN_MAX_TOKENS", "0x10"], ["TERN_TEMPERATURE", "3"]]) {
      error = await loadError({ cwd, env: { HOME: home, [name]: value } });
      assert.equal(error.key, name);
      assert.ok(error.message.includes(`${name}: key "`), error.message);
      assert.ok(error.message.endsWith(`got "${value}"`), error.message);
    }
    error = await loadError({ cwd, env: { HOME: home, TERN_BASE_URL: "localhost:8080" } });
    assert.equal(error.key, "TERN_BASE_URL");
  });
});

Deno.test("loadConfig() names the .env line of a bad variable", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.env", "TERN_MODEL=m\n  TERN_REQUEST_TIMEOUT_MS=-5\n");
    const error = await loadError({ cwd, env: { HOME: home } });
    assert.deepEqual(fields(error), {
      message: `Invalid .env file "${file}": line 2, column 3: TERN_REQUEST_TIMEOUT_MS ` +
        `(key "requestTimeoutMs"): expected an integer from 1 to 2147483647 (milliseconds), got "-5"`,
      file,
      key: "TERN_REQUEST_TIMEOUT_MS",
      line: 2,
      column: 3,
    });
  });
});

Deno.test("loadConfig() rejects an invalid flag value", async () => {
  await withFixture(async ({ home, cwd }) => {
    const error = await loadError({ cwd, env: { HOME: home }, flags: { maxRounds: "0" } });
    assert.equal(error.key, "maxRounds");
    assert.equal(
      error.message,
      `Invalid command-line option --max-rounds: key "maxRounds": ` +
        `expected an integer from 1 to 1000, got "0"`,
    );
  });
});

Deno.test("loadConfig() fails clearly when neither HOME nor TERN_HOME is known", async () => {
  await withFixture(async ({ cwd }) => {
    const error = await loadError({ cwd, env: {} });
    assert.equal(error.message, "Cannot locate the tern directory: set HOME or TERN_HOME");
  });
});
