/**
 * What the interactive UI shows of a session (the /sessions list, the /resume, /tree and
 * /rewind pickers, a resumed transcript, /pin) is masked for the keys tern holds now and the key
 * formats, as `tern sessions show` and `list` are: a session keeps a key unmasked when tern did
 * not hold it then.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { rewindCommand } from "../../src/cli/interactive/rewind_command.ts";
import { sessionCommands } from "../../src/cli/interactive/session_commands.ts";
import type { CommandContext } from "../../src/cli/interactive/commands.ts";
import { keyMasker } from "../../src/sandbox/secrets.ts";
import { Session } from "../../src/session/session.ts";
import type { Dialog } from "../../src/tui/dialog.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";

/** No key format: only "the keys tern holds now" can mask it. */
const KEY = "learned-later-0123456789abcdefXYZ";

/** A session of `cwd` written while tern did not hold `KEY`. */
function sessionWithKey(ternHome: string, cwd: string): Session {
  const session = Session.create(ternHome, { cwd, ternVersion: "test" });
  session.append({ type: "message", message: { role: "user", content: `use ${KEY} please` } });
  session.append({
    type: "message",
    message: {
      role: "assistant",
      content: `noted ${KEY}`,
      toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command: `x ${KEY}` }) }],
    },
  });
  session.append({
    type: "message",
    message: { role: "tool", toolCallId: "c1", name: "bash", content: "done" },
  });
  session.append({ type: "pins", pins: [`send ${KEY} along`] });
  return session;
}

Deno.test("tern /sessions, /resume and /pin mask a key tern holds now in an older session", async () => {
  const ws = await tempWorkspace();
  const ternHome = join(ws.home, ".tern");
  const old = sessionWithKey(ternHome, ws.dir);
  old.close();
  try {
    await withScriptedServer([], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: ternHome,
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: KEY,
        NO_COLOR: "1",
      };
      const input = `/sessions\n/resume ${old.id.slice(0, 8)}\n/pin\n`;
      const run = await runTernWithInput([], input, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), run.stdout);
      // Each place still says what was there.
      ok(/use \[REDACTED[^\]]*\] please/.test(run.stdout), run.stdout);
      ok(/noted \[REDACTED/.test(run.stdout), run.stdout);
      ok(/1\. send \[REDACTED[^\]]*\] along/.test(run.stdout), run.stdout);
    });
    // `tern -c` replays the same transcript as it opens.
    await withScriptedServer([], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: ternHome,
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: KEY,
        NO_COLOR: "1",
      };
      const run = await runTernWithInput(["-c"], "", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      ok(run.stdout.includes("please"), run.stdout);
      ok(!run.stdout.includes(KEY), run.stdout);
    });
  } finally {
    await ws.cleanup();
  }
});

Deno.test("/resume, /tree and /rewind pickers mask a key tern holds now in their rows", async () => {
  const ws = await tempWorkspace();
  const ternHome = join(ws.home, ".tern");
  const old = sessionWithKey(ternHome, ws.dir);
  old.close();
  const current = sessionWithKey(ternHome, ws.dir);
  try {
    const shown: string[] = [];
    const notices: string[] = [];
    const context = {
      canAsk: true,
      workspace: ws.dir,
      session: current,
      config: { ternHome },
      theme: themeFor(false),
      mask: (text: string) => keyMasker({ apiKey: KEY }).mask(text),
      pick: (dialog: Dialog<unknown>) => {
        shown.push(...dialog.render(400));
        return Promise.resolve(dialog.cancelled);
      },
      notice: (text: string) => notices.push(text),
      print: (lines: string[]) => shown.push(...lines),
    } as unknown as CommandContext;
    const signal = new AbortController().signal;
    const commands = [...sessionCommands(), rewindCommand()];
    for (const name of ["resume", "tree", "rewind"]) {
      const before = shown.length;
      await commands.find((command) => command.name === name)!.run(context, "", signal);
      const rows = shown.slice(before).join("\n");
      ok(rows.includes("[REDACTED"), `/${name}:\n${rows}`);
      ok(!rows.includes(KEY), `/${name}:\n${rows}`);
    }
    ok(!notices.join("\n").includes(KEY), notices.join("\n"));
  } finally {
    current.close();
    await ws.cleanup();
  }
});
