/**
 * The prompt history (`~/.tern/history.jsonl`) is a plain file that outlives the session: a key
 * the person pasted into a prompt is not kept there in the clear.
 */
import { deepEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { History } from "../../src/tui/history.ts";
import { waitUntil, withTern } from "../support/tmux_run.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const KEY = "sk-proj-Zq8xW3vN7tK2mB5pL9rD4fH6jS1cA0eYuIoPqRsT";
const TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

Deno.test("History.add() keeps a pasted key masked, on disk and in memory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "history.jsonl");
    const history = await History.open(path);
    await history.add(`use this key ${KEY} and ${TOKEN} please`);
    const file = await Deno.readTextFile(path);
    ok(!file.includes(KEY) && !file.includes(TOKEN), file);
    ok(file.includes("use this key") && file.includes("[REDACTED"), file);
    ok(!history.entries.some((entry) => entry.includes(KEY)), "the entry recalled is masked");
    const reopened = await History.open(path);
    ok(!reopened.entries.some((entry) => entry.includes(KEY) || entry.includes(TOKEN)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("History.open() masks with the mask it is given: a key of no known format", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "history.jsonl");
    const held = "local-key-4f9a8b7c6d5e";
    const history = await History.open(path, 10, {
      mask: (text) => text.replaceAll(held, "[REDACTED]"),
    });
    await history.add(`the key is ${held}`);
    deepEqual(await Deno.readTextFile(path), `"the key is [REDACTED]"\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

testWith(
  [tmuxNeed],
  "tern interactive keeps the key it holds masked in the history, whatever its format",
  async () => {
    const held = "local-key-7e3d9c1b5a2f";
    await withTern([{ text: "noted" }], { env: { TERN_API_KEY: held } }, async ({ tern, home }) => {
      await tern.type(`deploy with ${held} and ${TOKEN}\r`);
      await tern.waitForText("noted");
      const path = join(home, "history.jsonl");
      await waitUntil(
        async () => (await Deno.readTextFile(path).catch(() => "")) !== "",
        "the history file",
      );
      const file = await Deno.readTextFile(path);
      ok(!file.includes(held) && !file.includes(TOKEN), file);
      ok(file.includes("deploy with [REDACTED]"), file);
    });
  },
);
