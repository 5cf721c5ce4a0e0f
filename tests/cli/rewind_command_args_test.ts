/**
 * `/rewind` given a bad argument: an entry that names no request, or `undo` with nothing to
 * undo, is refused before the person is asked anything; the command line mode suggests quotes
 * the argument as a shell reads it. The diff it shows is masked for the keys tern holds now, as
 * `tern sessions rewind` shows it.
 */
import { equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { rewindCommand } from "../../src/cli/interactive/rewind_command.ts";
import type { CommandContext } from "../../src/cli/interactive/commands.ts";
import { DEFAULTS } from "../../src/config/mod.ts";
import { Session } from "../../src/session/session.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { keyMasker } from "../../src/sandbox/secrets.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

async function withContext(
  canAsk: boolean,
  body: (context: CommandContext, asked: () => number) => Promise<void>,
): Promise<void> {
  const ws = await tempWorkspace();
  const ternHome = join(ws.home, ".tern");
  const session = Session.create(ternHome, { cwd: ws.dir, ternVersion: "test" });
  session.append({ type: "message", message: { role: "user", content: "make a file" } });
  session.append({ type: "message", message: { role: "assistant", content: "made" } });
  let asked = 0;
  const context = {
    canAsk,
    workspace: ws.dir,
    session,
    config: { ...DEFAULTS, ternHome, rules: [] },
    theme: themeFor(false),
    mask: (text: string) => text,
    pick: () => {
      asked++;
      return Promise.resolve(undefined);
    },
    notice: () => {},
    print: () => {},
    conversation: () => Promise.reject(new Error("not connected")),
  } as unknown as CommandContext;
  try {
    await body(context, () => asked);
  } finally {
    session.close();
    await ws.cleanup();
  }
}

const signal = new AbortController().signal;

Deno.test("/rewind refuses an entry that names no request before asking anything", async () => {
  await withContext(true, async (context, asked) => {
    await rejects(
      Promise.resolve(rewindCommand().run(context, "nosuch", signal)),
      /Cannot rewind to "nosuch": not a user message of this session/,
    );
    await rejects(
      Promise.resolve(rewindCommand().run(context, "undo", signal)),
      /Cannot undo a rewind: there was none in this session/,
    );
    equal(asked(), 0, "no dialog opened for a bad target");
    // A real request still gets the question.
    const first = context.session.entries.find((entry) => entry.type === "message")!;
    await rewindCommand().run(context, first.id, signal);
    equal(asked(), 1);
  });
});

Deno.test("/rewind in line mode quotes the argument in the command it suggests", async () => {
  await withContext(false, async (context) => {
    const error = await Promise.resolve(rewindCommand().run(context, "$(touch pwned) x", signal))
      .then(() => undefined, (error: Error) => error);
    ok(error instanceof Error);
    match(error.message, /tern sessions rewind [0-9a-f]{8} '\$\(touch pwned\) x' --yes/);
  });
});

Deno.test("/rewind masks a key tern holds now in the diff it shows before asking", async () => {
  const key = "learned-later-0123456789abcdefXYZ";
  const server = await startScriptedServer((request) => {
    const answered = request.messages.some((message) => message.role === "tool");
    return answered ? { text: "done" } : {
      toolCalls: [{
        id: "w",
        name: "write",
        arguments: JSON.stringify({ path: "settings.txt", content: `token ${key}\n` }),
      }],
    };
  }, { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-rewind-tmp-" }));
  try {
    const env = { HOME: ws.home, TERN_HOME: ws.home, TERN_API_KEY: "sk-test-other", TMPDIR: tmp };
    const run = await runTern(scriptedRunArgs(server.baseUrl, "write it"), { cwd: ws.dir, env });
    equal(run.code, 0, run.stderr);
    const folder = [...Deno.readDirSync(join(ws.home, "sessions"))][0].name;
    const file = [...Deno.readDirSync(join(ws.home, "sessions", folder))]
      .find((entry) => entry.name.endsWith(".jsonl"))!.name;
    const session = await Session.open(join(ws.home, "sessions", folder, file));
    const user = session.entries.find((e) => e.type === "message" && e.message.role === "user")!;
    const printed: string[] = [];
    const answers: unknown[] = ["files", undefined];
    const context = {
      canAsk: true,
      workspace: ws.dir,
      session,
      config: { ...DEFAULTS, ternHome: ws.home, rules: [] },
      theme: themeFor(false),
      mask: (text: string) => keyMasker({ apiKey: key }).mask(text),
      pick: () => Promise.resolve(answers.shift()),
      notice: (text: string) => printed.push(text),
      print: (lines: string[]) => printed.push(...lines),
      conversation: () => Promise.reject(new Error("not connected")),
    } as unknown as CommandContext;
    try {
      await rewindCommand().run(context, user.id, signal);
    } finally {
      session.close();
    }
    const shown = printed.join("\n");
    ok(shown.includes("settings.txt"), shown);
    ok(shown.includes("token [REDACTED"), shown);
    ok(!shown.includes(key), shown);
    equal(await Deno.readTextFile(join(ws.dir, "settings.txt")), `token ${key}\n`);
  } finally {
    await server.close();
    await ws.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});
