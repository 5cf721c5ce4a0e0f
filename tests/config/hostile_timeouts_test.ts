/**
 * A time a repository's `.env` or `.tern/config.jsonc` sets past what a timer holds (2^31 - 1
 * ms) is refused when the config loads, with a clear error: a timer given more fires at once,
 * so `"reviewTimeoutMs": 3000000000` ("35 days") denied every AUTO review the moment it began,
 * saying the reviewer had given no answer within 3000000000 ms.
 */
import { equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/mod.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { SETTING_KEYS, settingOf } from "../../src/config/settings.ts";

const PAST_TIMER = 3_000_000_000;
const LONGEST = 2_147_483_647;

async function withFolder(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-timeouts-" }));
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const load = (dir: string) => loadConfig({ cwd: dir, env: {}, home: dir, warn: () => {} });

Deno.test("loadConfig() refuses a .env's millisecond setting past what a timer holds, for every such key", async () => {
  await withFolder(async (dir) => {
    const keys = SETTING_KEYS.filter((key) => key.endsWith("Ms"));
    equal(keys.length, 7, keys.join(", "));
    for (const key of keys) {
      const variable = settingOf(key).env?.[0];
      ok(variable !== undefined, key);
      await Deno.writeTextFile(join(dir, ".env"), `${variable}=${PAST_TIMER}\n`);
      await rejects(load(dir), (error: Error) => {
        ok(error instanceof ConfigError, String(error));
        match(error.message, new RegExp(`${variable} \\(key "${key}"\\): expected an integer`));
        match(error.message, new RegExp(`to ${LONGEST} \\(milliseconds\\), got "${PAST_TIMER}"`));
        return true;
      });
    }
    // The longest a timer holds is still taken where a project may set it (the others a
    // project may only lower: tests/config/project_costs_test.ts).
    await Deno.writeTextFile(join(dir, ".env"), `TERN_BASH_TIMEOUT_MS=${LONGEST}\n`);
    equal((await load(dir)).config.bashTimeoutMs, LONGEST);
  });
});

Deno.test("loadConfig() refuses a project config's reviewTimeoutMs past what a timer holds", async () => {
  await withFolder(async (dir) => {
    await Deno.mkdir(join(dir, ".tern"));
    await Deno.writeTextFile(
      join(dir, ".tern", "config.jsonc"),
      `{ "reviewTimeoutMs": ${PAST_TIMER} }\n`,
    );
    await rejects(load(dir), /reviewTimeoutMs.*2147483647 \(milliseconds\)/);
  });
});
