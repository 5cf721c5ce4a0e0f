/**
 * A session keeps a key a tool printed unmasked when tern did not hold that key then (it was set
 * up later, or the session ran with a local model): `tern sessions show`, `tree`, `export` and
 * `list` mask what they show of it for the keys tern holds now, so a transcript made to share a
 * session does not carry the key.
 */
import { equal, ok } from "node:assert/strict";
import { Session } from "../../src/session/session.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

const KEY = "sk-test-learned-later-0123456789abcdef";

Deno.test("tern sessions show|tree|export|list mask a key tern holds now", async () => {
  const ws = await tempWorkspace();
  try {
    const session = Session.create(ws.home, { cwd: ws.dir, ternVersion: "test" });
    session.append({ type: "message", message: { role: "user", content: `use ${KEY} please` } });
    session.append({
      type: "message",
      message: {
        role: "assistant",
        content: `Calling with ${KEY}.`,
        toolCalls: [{
          id: "c1",
          name: "bash",
          arguments: JSON.stringify({ command: `echo ${KEY}` }),
        }],
      },
    });
    session.append({
      type: "message",
      message: { role: "tool", toolCallId: "c1", name: "bash", content: `${KEY}\n` },
    });
    session.close();
    const runs = [
      ["sessions", "show", session.id],
      ["sessions", "show", session.id, "--json"],
      ["sessions", "tree", session.id],
      ["sessions", "export", session.id],
      ["sessions", "export", session.id, "--json"],
      ["sessions", "list"],
      ["sessions", "list", "--json"],
    ];
    for (const args of runs) {
      const run = await runTern(args, {
        cwd: ws.dir,
        env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: KEY },
        signal: AbortSignal.timeout(60_000),
      });
      equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
      ok(!run.stdout.includes(KEY), `${args.join(" ")}: ${run.stdout}`);
      // show --json gives no text of the conversation, only its facts.
      const quotes = !(args[1] === "show" && args.includes("--json"));
      if (quotes) ok(run.stdout.includes("[REDACTED"), `${args.join(" ")}: ${run.stdout}`);
      if (args.includes("--json")) JSON.parse(run.stdout);
    }
  } finally {
    await ws.cleanup();
  }
});
