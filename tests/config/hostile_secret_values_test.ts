/**
 * A refused value is quoted in the error, unless it looks like a key, or holds one among other
 * words: a base URL that does not parse (a colon missing) keeps its key in the query, and no URL
 * masking reaches a value that is no URL.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config/mod.ts";
import { withFixture } from "./_fixture.ts";

const KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234";
const TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";

async function refusal(load: Promise<unknown>): Promise<string> {
  let message = "";
  await assert.rejects(load, (error: Error) => {
    assert.ok(error instanceof ConfigError, String(error));
    message = error.message;
    return true;
  });
  return message;
}

Deno.test("loadConfig() never quotes a key held in a refused value, from any layer", async () => {
  await withFixture(async ({ home, cwd, write }) => {
    const urls = [`https//api.example.com/v1?key=${KEY}`, `api.example.com/v1?token=${TOKEN}`];
    for (const url of urls) {
      const secret = url.includes(KEY) ? KEY : TOKEN;
      const fromEnv = await refusal(loadConfig({ cwd, env: { HOME: home, TERN_BASE_URL: url } }));
      write("cwd/.env", `TERN_BASE_URL=${url}\n`);
      const fromDotenv = await refusal(loadConfig({ cwd, env: { HOME: home } }));
      write("cwd/.env", "");
      write("home/.tern/config.jsonc", JSON.stringify({ baseUrl: url }));
      const fromFile = await refusal(loadConfig({ cwd, env: { HOME: home } }));
      write("home/.tern/config.jsonc", "{}");
      for (const message of [fromEnv, fromDotenv, fromFile]) {
        assert.ok(!message.includes(secret.slice(8)), message);
        // What reads as the URL's query value is hidden, the rest quoted to say what was wrong.
        assert.match(message, /expected an http or https URL, got "[^"]*\?(key|token)=\*\*\*"/);
      }
    }
    // A value without one is quoted, to say what was wrong with it.
    const plain = await refusal(
      loadConfig({ cwd, env: { HOME: home, TERN_BASE_URL: "ftp://example.com/v1" } }),
    );
    assert.match(plain, /got "ftp:\/\/example\.com\/v1"$/);
  });
});
