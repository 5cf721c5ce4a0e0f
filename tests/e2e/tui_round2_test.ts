/**
 * Issue 30, second round, in the real `tern` in tmux: tables wrap their cells, the approval
 * dialog speaks plainly and shows line numbers, frames are never stale, interrupts are calm
 * and the queue belongs to the person.
 */
import { equal, ok } from "node:assert/strict";
import type { Script } from "../../src/llm/scripted.ts";
import { dialogReady, send, waitUntil, withTern } from "../support/tmux_run.ts";
import { shellQuote, startTernInTmux, type TmuxTern } from "../support/tmux.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

/** Lines of the capture, trailing blanks gone. */
const rows = (screen: string) => screen.split("\n").map((line) => line.trimEnd());

const WORDS = "the quick brown fox jumps over the lazy dog while seven zebras quietly watch";

testWith(
  [tmuxNeed],
  "tern interactive wraps a wide table's cells at 70 columns and cuts none of the text",
  async () => {
    const table =
      `| file | what changed | why |\n|---|---|---|\n| src/a.ts | ${WORDS} | ${WORDS} |`;
    const script: Script = [{ text: `Summary:\n\n${table}\n\nEnd of table.` }];
    await withTern(script, { columns: 70, rows: 40 }, async ({ tern }) => {
      await send(tern, "summarise");
      const screen = await tern.waitForText("End of table.");
      const lines = rows(screen);
      const top = lines.findIndex((line) => line.startsWith("┌"));
      const bottom = lines.findIndex((line) => line.startsWith("└"));
      ok(top >= 0 && bottom > top, screen);
      const body = lines.slice(top, bottom + 1);
      ok(body.every((line) => line.length <= 70), screen);
      ok(!body.join("").includes("…"), `no cell is cut:\n${screen}`);
      const letters = (s: string) => s.replace(/[^a-z]/g, "").length;
      equal(letters(body.join("")), letters("filewhatchangedwhysrcats" + WORDS + WORDS), screen);
      ok(body.length > 6, `the row wraps onto more lines:\n${screen}`);
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive asks about a multi-line command in plain words and sends the person's reason for a denial",
  async () => {
    const command = 'for f in *.txt; do\n  echo "$(wc -l < "$f") $f"\ndone';
    const script: Script = [
      { toolCalls: [{ id: "c1", name: "bash", arguments: JSON.stringify({ command }) }] },
      { text: "Understood, I will not loop." },
    ];
    await withTern(script, { columns: 90, rows: 30 }, async ({ tern, server }) => {
      await send(tern, "count lines");
      const dialog = rows(await tern.waitForText("[n] deny", { scrollback: false }));
      // A command's later lines sit behind a gutter, every line but the last marked as ending
      // there: none can pass for the dialog's own rows.
      const first = dialog.findIndex((line) => line === "for f in *.txt; do↵");
      ok(first > 0, dialog.join("\n"));
      equal(dialog[first + 1], '┊   echo "$(wc -l < "$f") $f"↵');
      equal(dialog[first + 2], "┊ done");
      ok(
        dialog.includes("contains `$(…)`: tern cannot check what it will run"),
        dialog.join("\n"),
      );
      ok(!dialog.some((line) => line.includes("runs-code")), "no classifier label");
      await dialogReady();
      await tern.keys("r");
      await tern.waitForText("Reason for the model:", { scrollback: false });
      await tern.type("use wc -l directly");
      await tern.keys("Enter");
      const done = await tern.waitForText("Understood, I will not loop.");
      ok(done.includes("denied by person: use wc -l directly"), done);
      const observation = server.requests[1].modelRequest.messages.at(-1);
      equal(observation?.role, "tool");
      ok(
        String(observation?.content).includes("The user denied it, saying: use wc -l directly"),
        String(observation?.content),
      );
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive numbers a proposed edit's lines and shows the whole diff on v before the answer",
  async () => {
    const before = Array.from({ length: 80 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const after = before.replace(/line (\d+)/g, "row $1");
    const script: Script = [
      {
        toolCalls: [{
          id: "e1",
          name: "write",
          arguments: JSON.stringify({ path: "notes.txt", content: after }),
        }],
      },
      { text: "Written." },
    ];
    const setup = (dir: string) => Deno.writeTextFile(`${dir}/notes.txt`, before);
    await withTern(script, { columns: 90, rows: 30, setup }, async ({ tern, dir }) => {
      await send(tern, "rename lines");
      const dialog = rows(await tern.waitForText("[v] view in full", { scrollback: false }));
      ok(dialog.some((line) => /^ {0,2}1 - line 1$/.test(line)), dialog.join("\n"));
      ok(!dialog.some((line) => line.includes("@@")), "no raw hunk header");
      ok(!dialog.some((line) => line.includes("40 - line 40")), "the middle is cut");
      await dialogReady();
      await tern.keys("v");
      await tern.waitForText("lines 1–", { scrollback: false });
      // The second page holds the middle the dialog had cut.
      await tern.keys("Space");
      await tern.waitForText("40 - line 40", { scrollback: false });
      await tern.keys("Escape");
      await tern.waitForText("[v] view in full", { scrollback: false });
      await tern.keys("y");
      await tern.waitForText("Written.");
      equal(await Deno.readTextFile(`${dir}/notes.txt`), after);
    });
  },
);

/** What tern wrote to its terminal, escape sequences removed: every frame, in order. */
async function recordPane(tern: TmuxTern, file: string): Promise<() => Promise<string>> {
  await tern.tmux("pipe-pane", "-O", "-t", tern.target, `cat >> ${shellQuote(file)}`);
  return async () =>
    (await Deno.readTextFile(file).catch(() => ""))
      // deno-lint-ignore no-control-regex
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b./g, "");
}

testWith(
  [tmuxNeed],
  "tern interactive never draws a finished call's live line again after committing it",
  async () => {
    const script: Script = [
      {
        toolCalls: [{
          id: "c1",
          name: "bash",
          arguments: JSON.stringify({ command: "touch made-by-tern.txt" }),
        }],
      },
      { text: "Made it." },
    ];
    const file = await Deno.makeTempFile({ prefix: "tern-pane-" });
    try {
      await withTern(script, { columns: 90, rows: 30 }, async ({ tern }) => {
        const written = await recordPane(tern, file);
        await send(tern, "make a file");
        await tern.waitForText("[n] deny", { scrollback: false });
        await dialogReady();
        await tern.keys("y");
        await tern.waitForText("Made it.");
        await waitUntil(async () => (await written()).includes("Made it."), "the answer");
        const stream = await written();
        const line = "✓ bash  touch made-by-tern.txt";
        const committed = stream.indexOf(line);
        ok(committed >= 0, stream);
        const after = stream.slice(committed + line.length);
        ok(
          !after.includes("bash  touch made-by-tern.txt"),
          `a stale live line was drawn:\n${after}`,
        );
        ok(!after.includes("[n] deny"), `a stale dialog was drawn:\n${after}`);
      });
    } finally {
      await Deno.remove(file);
    }
  },
);

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive takes a queued message back for editing on Up, and sends the edit instead",
  async () => {
    const script: Script = [
      {
        toolCalls: [{
          id: "c1",
          name: "bash",
          arguments: JSON.stringify({ command: "while [ ! -e go ]; do sleep 0.05; done" }),
        }],
      },
      { text: "Saw your edit." },
    ];
    await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, server, dir }) => {
      await send(tern, "wait for go");
      await tern.waitFor((screen) => /[\u2800-\u28ff] bash /.test(screen), "the running command");
      await send(tern, "first draft");
      await tern.waitForText("⏎ queued (↑ edits): first draft");
      await tern.keys("Up");
      await tern.waitFor(
        (screen) => rows(screen).includes("› first draft") && !screen.includes("⏎ queued"),
        "the queued text back in the editor",
        { scrollback: false },
      );
      // Withdrawn and rewritten: the edited text is queued in its place.
      await tern.keys("C-u");
      await send(tern, "final words");
      await tern.waitForText("⏎ queued (↑ edits): final words");
      await Deno.writeTextFile(`${dir}/go`, "");
      await tern.waitForText("Saw your edit.");
      const sent = JSON.stringify(server.requests[1].modelRequest.messages);
      ok(sent.includes("final words"), sent);
      ok(!sent.includes("first draft"), "the withdrawn text never reached the model");
    });
  },
);

testWith(
  [tmuxNeed],
  "tern run on a terminal shows the numbered diff before asking and renders the Markdown answer",
  async () => {
    const before = "alpha\nbeta\ngamma\n";
    const script: Script = [
      {
        toolCalls: [{
          id: "w1",
          name: "write",
          arguments: JSON.stringify({ path: "notes.txt", content: "alpha\nBETA\ngamma\n" }),
        }],
      },
      { text: "## Done\n\nI changed **one** line:\n\n- `beta` became `BETA`\n" },
    ];
    const ws = await tempWorkspace();
    const server = await startScriptedServer(script);
    try {
      await Deno.writeTextFile(`${ws.dir}/notes.txt`, before);
      const tern = await startTernInTmux({
        cwd: ws.dir,
        home: ws.home,
        baseUrl: server.baseUrl,
        args: ["run", "capitalise beta"],
        columns: 100,
      });
      try {
        const asked = rows(await tern.waitForText("[n] deny:", { timeoutMs: 60_000 }));
        const question = asked.findIndex((line) => line.startsWith("? Allow write: "));
        ok(question >= 0, asked.join("\n"));
        const diff = asked.slice(question);
        for (const line of ["  1   alpha", "  2 - beta", "  2 + BETA", "  3   gamma"]) {
          ok(diff.includes(line), `${line}:\n${asked.join("\n")}`);
        }
        // A person reads the question first (an answer sooner counts as typed ahead).
        await dialogReady();
        await tern.type("y");
        await tern.keys("Enter");
        const done = rows(await tern.waitForText("TERN_EXIT=0"));
        ok(done.includes("## Done"), done.join("\n"));
        ok(
          done.includes("I changed one line:"),
          `bold is styled, not starred:\n${done.join("\n")}`,
        );
        ok(done.some((line) => /^\s*[•\-*] beta became BETA$/.test(line)), done.join("\n"));
        ok(!done.some((line) => line.includes("`beta`")), "code spans are rendered");
        equal(await Deno.readTextFile(`${ws.dir}/notes.txt`), "alpha\nBETA\ngamma\n");
      } finally {
        await tern.close();
      }
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

testWith(
  [tmuxNeed],
  "tern interactive shows the last request's cache hits and /context shows the tools and the transcript",
  async () => {
    const script: Script = [{
      text: "Cached answer.",
      usage: { inputTokens: 10_000, cachedTokens: 8_000, outputTokens: 50 },
    }];
    await withTern(script, { columns: 200, rows: 40 }, async ({ tern }) => {
      await send(tern, "hello there");
      await tern.waitFor(
        (screen) => /ctx \d+% .*cache 80%/.test(screen),
        "the cache hits on the status line",
        { scrollback: false },
      );
      await send(tern, "/context");
      const shown = rows(await tern.waitForText("transcript ("));
      const window = shown.find((line) => line.startsWith("The model's window: ~"));
      ok(window !== undefined && /of \d+ tokens \(\d+%\)/.test(window), shown.join("\n"));
      ok(shown.some((line) => /^\s+\d+ {2}system prompt \(above\)$/.test(line)), shown.join("\n"));
      ok(
        shown.some((line) => /^\s+\d+ {2}tools \(\d+ definitions\)$/.test(line)),
        shown.join("\n"),
      );
      ok(
        shown.some((line) => /^\s+\d+ {2}transcript \(2 messages\)$/.test(line)),
        shown.join("\n"),
      );
      ok(shown.some((line) => line.startsWith("Last request: 10050 tokens")), shown.join("\n"));
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive redraws the transcript at the new width on Ctrl-L, keeping the scrollback",
  async () => {
    const answer = "The quick brown fox jumps over the lazy dog and keeps running far away.";
    await withTern([{ text: answer }], { columns: 100, rows: 20 }, async ({ tern }) => {
      await send(tern, "tell me a story");
      await tern.waitForText(answer);
      await tern.resize(40, 20);
      await tern.keys("C-l");
      const after = await tern.waitFor(
        (screen) => rows(screen).filter((line) => line === "› tell me a story").length === 2,
        "the transcript replayed below the old one",
        { scrollback: true },
      );
      const visible = rows(await tern.screen());
      ok(visible.includes("› tell me a story"), visible.join("\n"));
      // Re-rendered at 40 columns: words intact, every word of the answer on screen.
      const text = visible.join(" ").replace(/\s+/g, " ");
      ok(text.includes(answer), visible.join("\n"));
      ok(visible.every((line) => line.length <= 40), visible.join("\n"));
      // The first rendering is still in the scrollback above (the condition waited for two).
      ok(rows(after).indexOf("› tell me a story") < rows(after).lastIndexOf("› tell me a story"));
    });
  },
);
