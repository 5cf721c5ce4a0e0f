/**
 * On a terminal that says it takes no escape codes (TERM=dumb: an editor's shell buffer, a
 * serial console), `tern run` writes no colour: such a terminal would print "[2m" and
 * "[0m" around every word of tern's lines and the answer. Driven in tmux, whose capture with
 * `-e` shows every colour the pane was given.
 */
import { equal, match, ok } from "node:assert/strict";
import { tmuxNeed } from "../support/needs.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { startTernInTmux } from "../support/tmux.ts";

// deno-lint-ignore no-control-regex
const SGR = /\x1b\[([0-9;]*)m/g;

/** Whether `capture` holds a colour or attribute that is not a reset to the default. */
function coloured(capture: string): boolean {
  return [...capture.matchAll(SGR)].some(([, params]) => !/^(0|39|49)?$/.test(params));
}

const ANSWER = "# Title\n\nSome **bold** text and `code`.\n";

/** The pane after `tern run` ended, with the colours it was given (`capture-pane -e`). */
async function runInPane(env: Record<string, string>): Promise<string> {
  const server = await startScriptedServer(() => ({ text: ANSWER }), { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const pane = await startTernInTmux({
    cwd: ws.dir,
    home: ws.home,
    baseUrl: server.baseUrl,
    args: ["run", "--mode", "bypass", "say hi"],
    env,
  });
  try {
    await pane.waitForText("TERN_EXIT=", { timeoutMs: 60_000 });
    return await pane.tmux("capture-pane", "-p", "-e", "-S", "-500", "-t", pane.target);
  } finally {
    await pane.close();
    await server.close();
    await ws.cleanup();
  }
}

Deno.test({
  name: "runOnce() writes no colour codes when TERM is dumb",
  ignore: !tmuxNeed.ok,
  fn: async () => {
    const dumb = await runInPane({ TERM: "dumb" });
    match(dumb, /TERN_EXIT=0/);
    ok(!coloured(dumb), JSON.stringify(dumb));
    match(dumb, /Some bold text and code/);
    match(dumb, /tern: \d+ tokens in/);
    // The same run on a colour terminal is coloured: the check above can see colour.
    const colour = await runInPane({ TERM: "xterm-256color" });
    equal(coloured(colour), true, JSON.stringify(colour));
  },
});
