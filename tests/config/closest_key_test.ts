/**
 * An unknown key in a config file is answered with the nearest known one: of keys equally near,
 * the one a swap of two letters gives, and never after measuring a huge key name at length.
 */
import assert from "node:assert/strict";
import { checkConfigFile } from "../../src/config/jsonc_file.ts";

async function messageOf(text: string): Promise<string> {
  try {
    await checkConfigFile(text, "/w/.tern/config.jsonc", "project");
  } catch (error) {
    return (error as Error).message;
  }
  return "";
}

Deno.test("checkConfigFile() suggests the key two swapped letters give over an equally near one", async () => {
  // "profilse" is one edit from "profile" (a letter dropped) and from "profiles" (a swap).
  assert.match(
    await messageOf(`{ "profilse": {} }`),
    /unknown key "profilse": did you mean "profiles"\?/,
  );
  assert.match(await messageOf(`{ "providesr": {} }`), /did you mean "providers"\?/);
  assert.match(await messageOf(`{ "modle": "m" }`), /did you mean "model"\?/);
});

Deno.test("checkConfigFile() answers a hostile file's megabyte key name at once", async () => {
  const started = performance.now();
  const message = await messageOf(`{ "${"x".repeat(1_000_000)}": 1 }`);
  assert.match(message, /unknown key "x{60}…"$/);
  assert.ok(performance.now() - started < 3_000, `${performance.now() - started} ms`);
});
