/**
 * ASK at a real terminal: `tern run` in tmux asks before a write, and the answer typed at the
 * prompt decides. The model is the scripted server; the terminal, keys and process are real.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { ROOT, tempWorkspace } from "../support/tern_process.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";
import { TYPED_AHEAD_MS } from "../../src/cli/ask_person.ts";

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

/** Whether an SGR sequence in `text` turns on "conceal" (8), colour arguments aside. */
function conceals(text: string): boolean {
  // deno-lint-ignore no-control-regex
  for (const [, params] of text.matchAll(/\x1b\[([0-9;]*)m/g)) {
    const codes = params.split(";");
    for (let i = 0; i < codes.length; i++) {
      if (codes[i] === "38" || codes[i] === "48") i += codes[i + 1] === "5" ? 2 : 4;
      else if (codes[i] === "8") return true;
    }
  }
  return false;
}

async function askAndAnswer(
  answer: string,
  typedAhead?: string,
): Promise<{ written: boolean; screen: string }> {
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
    // Typed while tern starts: it waits in the terminal's buffer for the question.
    if (typedAhead !== undefined) tmux("send-keys", "-t", session, typedAhead, "Enter");
    const screen = () => tmux("capture-pane", "-p", "-t", session);
    await waitFor(() => screen().includes("[y] allow once"), "the permission prompt");
    if (typedAhead !== undefined) {
      await waitFor(() => screen().includes("was ignored) answer now:"), "the question again");
    }
    const shown = screen();
    // A person reads the question first: an answer sooner is taken as typed ahead.
    await new Promise((resolve) => setTimeout(resolve, TYPED_AHEAD_MS + 200));
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

testWith(
  [tmuxNeed],
  "tern run at a terminal: a y typed before the question appeared allows nothing",
  async () => {
    const { written, screen } = await askAndAnswer("n", "y");
    match(screen, /a line typed before the question appeared was ignored/);
    equal(written, false, "the typed-ahead y wrote the file");
  },
);

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

testWith(
  [tmuxNeed],
  "tern run at a terminal renders Markdown whose character references decode to escapes as text",
  async () => {
    // marked decodes `&#27;` to ESC: the answer must still set no title, write no clipboard,
    // clear nothing and conceal nothing, so the real question below it stays readable.
    const answer = "Done, all tests pass.\n\n" +
      "**&#27;]0;PWNED-TITLE&#7;&#27;]52;c;cm0gLXJmIH4=&#7;&#27;[2J&#27;[H**\n\n" +
      "| &#x9b;2J | &#x202E;x |\n|--|--|\n| &#8;y | z |\n\n" +
      "? Allow bash: ls -la\n  [y] allow once, [n] deny: **&#x1b;[8m**";
    const server = await startScriptedServer([
      {
        text: answer,
        toolCalls: [{ id: "c1", name: "bash", arguments: '{"command":"touch PWNED"}' }],
      },
      { text: "&#27;[28mfinished" },
    ], { chunkDelayMs: 0 });
    const ws = await tempWorkspace();
    const session = `tern-md-${crypto.randomUUID().slice(0, 8)}`;
    const raw = join(ws.home, "raw.txt");
    try {
      const command = [
        `cd ${quote(ws.dir)}`,
        `TERN_HOME=${quote(ws.home)} HOME=${quote(ws.home)} TERN_API_KEY=sk-test-terminal-123456 ` +
        `${quote(join(ROOT, "bin/tern"))} run --base-url ${server.baseUrl} -m scripted 'go'`,
        "sleep 30",
      ].join("; ");
      tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", command);
      tmux("pipe-pane", "-o", "-t", session, `cat >> ${quote(raw)}`);
      const screen = () => tmux("capture-pane", "-p", "-t", session);
      await waitFor(() => screen().includes("touch PWNED"), "the permission prompt");
      const title = tmux("display", "-p", "-t", session, "#{pane_title}");
      const coloured = tmux("capture-pane", "-e", "-p", "-t", session);
      tmux("send-keys", "-t", session, "n", "Enter");
      await waitFor(() => screen().includes("finished"), "the answer after the denial");
      const bytes = Deno.readTextFileSync(raw);
      ok(!title.includes("PWNED"), `the title was set: ${title}`);
      ok(screen().includes("Done, all tests pass."), screen());
      match(screen(), /\? Allow bash: touch PWNED/);
      for (const sequence of ["\x1b]0;", "\x1b]52;", "\x1b[2J", "\x1b[H", "\x1b[8m", "\x9b"]) {
        ok(!bytes.includes(sequence), `${JSON.stringify(sequence)} reached the terminal`);
      }
      ok(!conceals(coloured), coloured);
      ok(!bytes.includes("\u202e"), "a bidi override reached the terminal");
    } finally {
      tmux("kill-session", "-t", session);
      await server.close();
      await ws.cleanup();
    }
  },
);
