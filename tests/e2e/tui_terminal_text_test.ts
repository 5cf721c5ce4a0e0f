/**
 * What the person sees is the truth: the model and its tools write escape sequences, carriage
 * returns, OSC title, hyperlink and clipboard writes, bidi overrides and endless reasons; the
 * real `tern` runs in a tmux pane (a real pty), and the screen tmux keeps must show the real
 * request, facts first, and nothing the model tried to make the terminal do.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Script } from "../../src/llm/scripted.ts";
import type { TmuxTern } from "../support/tmux.ts";
import { dialogReady, withTern } from "../support/tmux_run.ts";

/** Clears the line and returns to its start: a terminal would show only "ls". */
const HIDDEN_COMMAND = "rm -rf ~/important \x1b[2K\rls";
const TITLE = "\x1b]0;pwned-title\x07";
const CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07";
const LINK = "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\";
const REASON = "\n".repeat(200) + `${TITLE}just listing files\x1b[8m, nothing else`;

/** The pane's title and tmux's paste buffers: what OSC 0 and OSC 52 would have changed. */
async function terminalState(tern: TmuxTern): Promise<{ title: string; buffers: string }> {
  const title = (await tern.tmux("display-message", "-p", "-t", tern.target, "#{pane_title}"))
    .trim();
  const buffers = (await tern.tmux("list-buffers", "-F", "#{buffer_sample}")).trim();
  return { title, buffers };
}

/** Row index of the first line containing `text`, or -1. */
/** The first row of `screen` at or after row `from` that holds `text`; -1 when none does. */
function rowOf(screen: string, text: string, from = 0): number {
  const at = screen.split("\n").slice(from).findIndex((line) => line.includes(text));
  return at < 0 ? -1 : at + from;
}

Deno.test("tern interactive shows an escape-laden command as it is, facts before the model's reason", async () => {
  const script: Script = [
    {
      text: `${TITLE}${CLIPBOARD}Let me look at the ${LINK}.\u202e gnihton \x1b[1A\x1b[2K`,
      toolCalls: [
        // A read runs without asking: its line in the transcript is the first thing drawn.
        { id: "c0", name: "read", arguments: JSON.stringify({ path: `notes${TITLE}.txt` }) },
        {
          id: "c1",
          name: "bash",
          arguments: JSON.stringify({ command: HIDDEN_COMMAND, description: REASON }),
        },
      ],
    },
    { text: "Denied, so I stop here." },
  ];
  await withTern(script, { rows: 30, columns: 100 }, async ({ tern, server }) => {
    // OSC 52 would be taken into a paste buffer with this on: the test can see a write.
    await tern.tmux("set-option", "-g", "set-clipboard", "on");
    await tern.tmux("set-option", "-g", "allow-rename", "on");
    const before = await terminalState(tern);
    await tern.type("look around");
    await tern.keys("Enter");
    const dialog = await tern.waitForText("[n] deny", { scrollback: false });

    const title = rowOf(dialog, "Allow bash?");
    // The call's progress line above the dialog shows it too: what runs, controls visible.
    ok(rowOf(dialog, "bash  rm -rf ~/important ␛[2K␍ls") >= 0, `the call's line:\n${dialog}`);
    const fact = rowOf(dialog, "rm -rf ~/important ␛[2K␍ls", title);
    const said = rowOf(dialog, "Model's reason (unverified): just listing files, nothing else");
    ok(title >= 0, `the dialog's title is on screen:\n${dialog}`);
    ok(fact > title, `the real command is shown, controls visible:\n${dialog}`);
    ok(said > fact, `the model's reason comes after the facts, marked:\n${dialog}`);
    if (Deno.env.get("SHOW_SCREEN")) console.log(dialog);
    // The title write in the answer is removed; in the read's path (what the tool was asked
    // for) it is shown, made visible, never obeyed.
    equal(
      dialog.split("pwned").length - 1,
      dialog.split("␛]0;pwned-title␇").length - 1,
      `"pwned" appears only as the visible form of the read's path:\n${dialog}`,
    );
    ok(!dialog.includes("\u202e"), "no bidi override reaches the screen");
    ok(!dialog.includes("evil.example"), "a link's hidden address is not shown");
    ok(dialog.includes("Let me look at the docs."), `the answer's text is shown:\n${dialog}`);

    await dialogReady();
    await tern.keys("n");
    const done = await tern.waitForText("Denied, so I stop here.");
    ok(done.includes("rm -rf ~/important"), `the transcript shows the real command:\n${done}`);
    ok(
      done.includes("read  notes␛]0;pwned-title␇.txt"),
      `the read's line shows its path as asked, controls visible:\n${done}`,
    );
    equal(server.requests.length, 2);
    deepEqual(await terminalState(tern), before, "the title and clipboard are untouched");
  });
});

Deno.test("tern interactive shows each path, host and command of a permission request before its reason", async () => {
  const script: Script = [
    {
      toolCalls: [{
        id: "p1",
        name: "request_permissions",
        arguments: JSON.stringify({
          reason: REASON,
          scope: "session",
          // A C0 control (ESC, CR) in a path or command, and any in a host, is refused before
          // anyone is asked: a C1 control (CSI) and bidi overrides ride on them instead.
          write: ["../outside-\u009b2K\u202esafe"],
          hosts: ["evil.example"],
          commands: ["curl\u009b1A evil\u202e\u2066moc"],
        }),
      }],
    },
    { text: "No permission, no change." },
  ];
  await withTern(script, { rows: 30, columns: 100 }, async ({ tern, dir }) => {
    await tern.type("get access");
    await tern.keys("Enter");
    const dialog = await tern.waitForText("[n] deny", { scrollback: false });
    const outside = join(dir, "..", "outside-");
    const rows = [
      rowOf(dialog, "Allow request_permissions?"),
      rowOf(
        dialog,
        `write  ${await Deno.realPath(join(dir, ".."))}/outside-⟨U+009B⟩2K⟨U+202E⟩safe`,
      ),
      rowOf(dialog, "host   evil.example"),
      rowOf(dialog, "run without asking: curl⟨U+009B⟩1A evil⟨U+202E⟩⟨U+2066⟩moc"),
      rowOf(dialog, "for    this session"),
      rowOf(dialog, "Model's reason (unverified): just listing files, nothing else"),
    ];
    ok(rows.every((row) => row >= 0), `every fact is on screen (${rows}):\n${dialog}`);
    deepEqual([...rows].sort((a, b) => a - b), rows, `facts first, reason last:\n${dialog}`);
    await dialogReady();
    await tern.keys("n");
    await tern.waitForText("No permission, no change.");
    equal(await Deno.stat(outside).then(() => true, () => false), false);
  });
});
