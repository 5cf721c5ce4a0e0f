/**
 * Helpers for end-to-end tests of the interactive UI: a run of tern in tmux against a scripted
 * server in a temporary workspace, typing, quitting, and reading the session files it wrote.
 */
import { deepEqual, match } from "node:assert/strict";
import { join } from "node:path";
import { DIALOG_GUARD_MS } from "../../src/cli/interactive/app.ts";
import type { Message } from "../../src/core/messages.ts";
import type { Script } from "../../src/llm/scripted.ts";
import {
  type ScriptedServer,
  type ScriptedServerOptions,
  startScriptedServer,
} from "./scripted_server.ts";
import { tempWorkspace } from "./tern_process.ts";
import { startTernInTmux, type TmuxTern } from "./tmux.ts";

/** The empty editor's placeholder while no turn runs. */
export const PLACEHOLDER = "ask tern, or / for commands";
/** The first prompt may wait for TypeScript to be transpiled on a cold cache. */
const FIRST_PROMPT_MS = 60_000;

/** What a test body gets from `withTern`. */
export interface TernRun {
  tern: TmuxTern;
  server: ScriptedServer;
  dir: string;
  home: string;
}

/**
 * Starts the server and tern in tmux, waits for the first prompt and runs `body`. Then, unless
 * the body left tern already, it quits with Ctrl-D (the editor must be empty, no dialog open),
 * checks that tern exited with 0 and removed its private temporary folder (tern runs with its
 * own TMPDIR), and cleans up: tmux server, scripted server, workspace.
 */
export async function withTern(
  script: Script,
  options: {
    args?: string[];
    columns?: number;
    rows?: number;
    env?: Record<string, string>;
    /** A shell command run in the pane before tern starts. */
    before?: string;
    /** Runs before tern starts (files tern reads at start: templates, skills). */
    setup?: (dir: string, home: string) => Promise<void>;
    /** Options of the scripted server (its `beforeReply` gate). */
    server?: ScriptedServerOptions;
  },
  body: (run: TernRun) => Promise<void>,
): Promise<void> {
  const { setup, server: serverOptions, ...start } = options;
  const ws = await tempWorkspace();
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-e2e-tmp-" }));
  const server = await startScriptedServer(script, serverOptions);
  let tern: TmuxTern | undefined;
  try {
    await setup?.(ws.dir, ws.home);
    tern = await startTernInTmux({
      cwd: ws.dir,
      home: ws.home,
      baseUrl: server.baseUrl,
      ...start,
      env: { TMPDIR: tmp, ...start.env },
    });
    await tern.waitForText(PLACEHOLDER, { timeoutMs: FIRST_PROMPT_MS });
    await body({ tern, server, dir: ws.dir, home: ws.home });
    const after = await tern.screen({ scrollback: true });
    const exited = after.includes("TERN_EXIT=") ? after : await quit(tern);
    match(exited, /TERN_EXIT=0/);
    const left = [];
    for await (const entry of Deno.readDir(tmp)) left.push(entry.name);
    deepEqual(left, [], "tern removes its temporary folder when it exits");
  } finally {
    try {
      await tern?.close();
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(tmp, { recursive: true });
    }
  }
}

/**
 * Waits out the time in which a dialog that has just appeared drops keys (`DIALOG_GUARD_MS`:
 * a key typed for the editor must not answer it), so that the next key answers it.
 */
export async function dialogReady(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, DIALOG_GUARD_MS + 200));
}

/** Types `text` into the editor and submits it. */
export async function send(tern: TmuxTern, text: string): Promise<void> {
  await tern.type(text);
  await tern.keys("Enter");
}

/**
 * `/rewind` to before the last message, files and conversation: the first two dialogs answered
 * with Enter (the latest message, both). What follows (a conflict, the confirmation) is the
 * test's.
 */
export async function rewindLast(tern: TmuxTern): Promise<void> {
  await send(tern, "/rewind");
  await tern.waitForText("Rewind to before");
  await dialogReady();
  await tern.keys("Enter");
  await tern.waitForText("files and conversation");
  await dialogReady();
  await tern.keys("Enter");
}

/** Ctrl-D on the empty editor; resolves once the pane's shell printed tern's exit code. */
export async function quit(tern: TmuxTern): Promise<string> {
  await tern.keys("C-d");
  return await tern.waitForText("TERN_EXIT=");
}

/** Every entry of every session file under `home`. */
export async function sessionEntries(home: string): Promise<Array<Record<string, unknown>>> {
  const entries: Array<Record<string, unknown>> = [];
  const walk = async (dir: string) => {
    for await (const item of Deno.readDir(dir)) {
      const path = join(dir, item.name);
      if (item.isDirectory) await walk(path);
      else if (item.name.endsWith(".jsonl")) {
        const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
        entries.push(...lines.map((line) => JSON.parse(line)));
      }
    }
  };
  await walk(join(home, "sessions"));
  return entries;
}

/** The messages recorded in the session files. */
export async function sessionMessages(
  home: string,
): Promise<Array<{ id: string; message: Message }>> {
  return (await sessionEntries(home))
    .filter((entry) => entry.type === "message")
    .map((entry) => ({ id: entry.id as string, message: entry.message as Message }));
}

/** Polls `condition` every 100 ms for up to 20 s. */
export async function waitUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
