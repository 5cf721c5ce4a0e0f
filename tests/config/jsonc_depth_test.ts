import { equal, match, ok, rejects } from "node:assert/strict";
import * as jsonc from "jsonc-parser";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { deeperThanAt, MAX_JSONC_DEPTH } from "../../src/config/jsonc_depth.ts";
import { withFixture } from "./_fixture.ts";

/** `{"models":` and then `depth` arrays inside one another, the repository's attack. */
function nestedConfig(depth: number): string {
  return `{"models":${"[".repeat(depth)}${"]".repeat(depth)}}`;
}

Deno.test("deeperThanAt() points at the first bracket past the limit, and skips strings and comments", () => {
  const limit = "[".repeat(MAX_JSONC_DEPTH) + "]".repeat(MAX_JSONC_DEPTH);
  equal(deeperThanAt(jsonc, limit), undefined);
  equal(deeperThanAt(jsonc, `[${limit}]`), MAX_JSONC_DEPTH);
  equal(deeperThanAt(jsonc, '{"a": "[[[[", // {{{{\n "b": /* [[[[ */ [{}]}', 3), undefined);
  equal(deeperThanAt(jsonc, '{"a": "]]]]", "b": [[[1]]]}', 3), 21);
  equal(deeperThanAt(jsonc, "[".repeat(1_000_000)), MAX_JSONC_DEPTH);
});

Deno.test("loadConfig() refuses a project config nested 5,000 deep with a ConfigError naming the file", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("cwd/.tern/config.jsonc", nestedConfig(5_000));
    await rejects(loadConfig({ cwd, env: { HOME: home } }), (error) => {
      ok(error instanceof ConfigError, String(error));
      equal(error.file, file);
      equal(error.line, 1);
      // The object is the first level: the 64th "[" (after 10 characters) opens the 65th.
      equal(error.column, 10 + MAX_JSONC_DEPTH);
      match(error.message, /^Invalid config file ".*\/\.tern\/config\.jsonc": line 1, column 74: /);
      match(error.message, new RegExp(`nested more than ${MAX_JSONC_DEPTH} levels deep`));
      return true;
    });
  });
});

Deno.test("loadConfig() refuses the person's own config nested 100,000 deep, and reads one of 64 levels", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const file = write("home/.tern/config.jsonc", nestedConfig(100_000));
    await rejects(loadConfig({ cwd, env: { HOME: home } }), (error) => {
      ok(error instanceof ConfigError, String(error));
      equal(error.file, file);
      match(error.message, /nested more than 64 levels deep/);
      return true;
    });
    // Within the limit, the file reaches the usual checks: its value is what is wrong.
    write("home/.tern/config.jsonc", nestedConfig(MAX_JSONC_DEPTH - 1));
    await rejects(loadConfig({ cwd, env: { HOME: home } }), (error) => {
      ok(error instanceof ConfigError, String(error));
      ok(!/nested more than/.test(error.message), error.message);
      return true;
    });
  });
});
