/**
 * A path rule whose pattern backtracks (picomatch's regular expressions) is refused when the
 * config loads: a repository's `.tern/config.jsonc` may add deny rules, and one such as
 * `**` + `/*a*a*a*a*a*a*b` held every call's path check for seconds on one 60-character name,
 * and for hours on a longer one the repository names a file.
 */
import { equal, match, rejects } from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../src/config/mod.ts";
import { ConfigError } from "../../src/config/errors.ts";

Deno.test("loadConfig() refuses a path rule whose matching backtracks, naming the file; usual ones load", async () => {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-costly-rules-" }));
  try {
    Deno.mkdirSync(join(dir, ".tern"));
    const file = join(dir, ".tern", "config.jsonc");
    const load = () => loadConfig({ cwd: dir, env: {}, home: dir, warn: () => {} });
    for (const path of ["**/*a*a*a*a*a*a*b", "*x*y*z*w", "**/a/**/b/**/c"]) {
      Deno.writeTextFileSync(file, JSON.stringify({ rules: [{ action: "deny", path }] }));
      await rejects(load(), (error: Error) => {
        equal(error instanceof ConfigError, true, String(error));
        match(error.message, /rules\.0\.path.*its matching backtracks/);
        equal(error.message.includes(file), true, error.message);
        return true;
      });
    }
    for (const path of ["**/*.env", "secrets/**", "src/**/*.test.*.ts"]) {
      Deno.writeTextFileSync(file, JSON.stringify({ rules: [{ action: "deny", path }] }));
      const { config } = await load();
      equal(config.rules.at(-1)?.path, path);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
