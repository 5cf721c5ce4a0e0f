/**
 * A hangup while a picker is open, in the real `tern` in tmux: the picker answers as cancelled,
 * so the slash command waiting on it ends and the session shuts down the orderly way (exit 0,
 * its temporary folder removed, no process left) instead of living on, orphaned, with the
 * session's lock.
 */
import { deepEqual, ok } from "node:assert/strict";
import type { Script } from "../../src/llm/scripted.ts";
import { PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { descendants, type TmuxTern } from "../support/tmux.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

/** Longer than an orderly shutdown takes on a loaded machine; a stuck one never ends. */
const EXIT_MS = 10_000;

/** The pid of tern (the `deno … main.ts` process the pane's shell runs). */
async function ternPid(tern: TmuxTern): Promise<number> {
  const pane = (await tern.tmux("list-panes", "-t", tern.target, "-F", "#{pane_pid}")).trim();
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=,args=", "--ppid", pane],
    stdout: "piped",
    stderr: "null",
  }).output();
  const row = new TextDecoder().decode(out.stdout).split("\n").find((line) =>
    line.includes("main.ts")
  );
  if (row === undefined) throw new Error(`Cannot find tern among the children of pane ${pane}`);
  return Number(row.trim().split(/\s+/, 1)[0]);
}

testWith(
  [tmuxNeed],
  "tern interactive exits at a SIGHUP while the /resume picker is open",
  async () => {
    const script: Script = [{ text: "Hello back." }];
    await withTern(script, {}, async ({ tern }) => {
      await send(tern, "hello");
      await tern.waitForText("Hello back.");
      await tern.waitFor((screen) => screen.includes(PLACEHOLDER), "the prompt");
      await send(tern, "/resume");
      await tern.waitForText("Resume session");
      const pid = await ternPid(tern);
      const tree = await descendants(pid);
      Deno.kill(pid, "SIGHUP");
      const screen = await tern.waitForText("TERN_EXIT=", { timeoutMs: EXIT_MS }).catch(() => {
        throw new Error(`tern did not exit within ${EXIT_MS} ms of a SIGHUP with a picker open`);
      });
      ok(/TERN_EXIT=0/.test(screen), screen);
      const living = new Set((await descendants(1)).map(Number));
      deepEqual(tree.filter((child) => living.has(child)), [], "no process of tern lives on");
    });
  },
);
