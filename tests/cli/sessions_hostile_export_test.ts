/**
 * `tern sessions export --json` shows what the session keeps unmasked by design, reasoning its
 * API signed (the API takes it back only as it was sent), masked as every front end shows it:
 * an export made to share a session does not carry the key the model wrote while it reasoned.
 */
import { equal, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const HELD_KEY = "sk-test-held-key-0123456789abcdef";
const FORMAT_KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

Deno.test("tern sessions export --json masks keys in signed reasoning", async () => {
  const ws = await tempWorkspace();
  try {
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    session.append({ type: "message", message: { role: "user", content: "deploy" } });
    // As the conversation records an Anthropic answer: its signed thinking block whole.
    session.append({
      type: "message",
      message: {
        role: "assistant",
        content: "Deployed.",
        thinking: [{
          api: "anthropic",
          text: `The key is ${HELD_KEY}, the token ${FORMAT_KEY}.`,
          signature: "c2lnbmVk",
        }],
      },
    });
    session.close();
    const run = await runTern(["sessions", "export", session.id, "--json"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: HELD_KEY },
      signal: AbortSignal.timeout(60_000),
    });
    equal(run.code, 0, run.stderr);
    ok(!run.stdout.includes(HELD_KEY), run.stdout);
    ok(!run.stdout.includes(FORMAT_KEY), run.stdout);
    const exported = JSON.parse(run.stdout);
    const thinking = exported.entries.at(-1).message.thinking[0];
    ok(thinking.text.includes("[REDACTED"), thinking.text);
    equal(thinking.signature, "c2lnbmVk", "the opaque signature is shown as it is");
    equal(exported.entries.at(-1).message.content, "Deployed.");
  } finally {
    await ws.cleanup();
  }
});
