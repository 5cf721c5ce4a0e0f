/**
 * A config file's key names are the repository's words: an error that names one quotes it as
 * JSON (a line break in it cannot forge a line of tern's own) and shortens it (a megabyte name
 * does not become a megabyte message), at any depth and in the list of unknown keys.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

const FORGED = "a\u001b]0;owned\u0007\ntern: all checks passed";
const LONG = "k".repeat(200_000);

Deno.test("loadConfig() quotes and shortens the file's key names in its errors", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const files: Array<[unknown, RegExp]> = [
      [{ models: { [FORGED]: { bogus: 1 } } }, /"models\.a\\u001b\]0;owned\\u0007\\ntern: all /],
      [{ profiles: { [FORGED]: { read: ["."] } } }, /"profiles\.a\\u001b/],
      [{ sandbox: { [FORGED]: 1 } }, /"sandbox": Unrecognized key: "a\\u001b/],
      [{ models: { [LONG]: { bogus: 1 } } }, /"models\.k{73}…": Unrecognized key: "bogus"$/],
      [{ rules: [{ action: "deny", path: "x", [LONG]: 1 }] }, /Unrecognized key: "k{80}…"$/],
    ];
    for (const [file, message] of files) {
      write("cwd/.tern/config.jsonc", JSON.stringify(file));
      await assert.rejects(loadConfig({ cwd, env: { HOME: home } }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, message);
        for (const character of ["\n", "\u001b", "\u0007"]) {
          assert.ok(!error.message.includes(character), JSON.stringify(error.message));
        }
        assert.ok(error.message.length < 400, `${error.message.length} characters`);
        return true;
      });
    }
  });
});
