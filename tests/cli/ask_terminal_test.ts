/**
 * ASK at a real terminal: `tern run` in tmux asks before a write, and the answer typed at the
 * prompt decides. The model is the scripted server; the terminal, keys and process are real.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { ROOT, tempWorkspace } from "../support/tern_process.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

function tmux(...args: string[]): string {
  const out = new Deno.Command("tmux", { args, stderr: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout);
}

async function waitFor(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

async function askAndAnswer(answer: string): Promise<{ written: boolean; screen: string }> {
  const server = await startScriptedServer([
    { toolCalls: [{ id: "w1", name: "write", arguments: '{"path":"out.txt","content":"ok\\n"}' }] },
    { text: "finished" },
  ], { chunkDelayMs: 0 });
  const ws = await tempWorkspace();
  const session = `tern-ask-${crypto.randomUUID().slice(0, 8)}`;
  const exitFile = join(ws.home, "exit-code");
  try {
    const command = [
      `cd ${quote(ws.dir)}`,
      `TERN_HOME=${quote(ws.home)} HOME=${quote(ws.home)} TERN_API_KEY=sk-test-terminal-123456 ` +
      `${quote(join(ROOT, "bin/tern"))} run --base-url ${server.baseUrl} -m scripted 'write it'`,
      `echo $? > ${quote(exitFile)}`,
    ].join("; ");
    tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", command);
    const screen = () => tmux("capture-pane", "-p", "-t", session);
    await waitFor(() => screen().includes("[y] allow once"), "the permission prompt");
    const shown = screen();
    tmux("send-keys", "-t", session, answer, "Enter");
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(exitFile).trim() !== "";
      } catch {
        return false;
      }
    }, "tern to exit");
    equal(Deno.readTextFileSync(exitFile).trim(), "0");
    const written = await Deno.stat(join(ws.dir, "out.txt")).then(() => true, () => false);
    return { written, screen: shown };
  } finally {
    tmux("kill-session", "-t", session);
    await server.close();
    await ws.cleanup();
  }
}

testWith([tmuxNeed], "tern run at a terminal asks before a write: y allows it once", async () => {
  const { written, screen } = await askAndAnswer("y");
  match(screen, /\? Allow write: write out\.txt/);
  match(screen, /"write" changes files/);
  ok(written, "the approved write did not happen");
});

testWith([tmuxNeed], "tern run at a terminal asks before a write: n denies it", async () => {
  const { written } = await askAndAnswer("n");
  ok(!written, "the denied write happened");
});
