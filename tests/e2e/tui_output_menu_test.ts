/**
 * Issue 30 in the real `tern` in tmux: a finished command shows what it printed (its tail,
 * `… N more lines`, the whole output with /output or Ctrl-O), the slash menu opens on "/" and
 * filters as the person types (templates and skills included), and "Esc to stop" stays on the
 * status line while the agent works.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Script } from "../../src/llm/scripted.ts";
import { PLACEHOLDER, quit, send, withTern } from "../support/tmux_run.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { tempWorkspace } from "../support/tern_process.ts";
import { startTernInTmux } from "../support/tmux.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

const bash = (id: string, command: string) => ({
  toolCalls: [{ id, name: "bash", arguments: JSON.stringify({ command }) }],
});

const RUNNING = /[\u2800-\u28ff] bash /;

/** Lines of the capture, trailing blanks gone. */
const rows = (screen: string) => screen.split("\n").map((line) => line.trimEnd());

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive shows a command's output tail, a failure's error and the whole output on /output",
  async () => {
    const script: Script = [
      bash("c1", "seq 1 300"),
      bash("c2", "ls /nonexistent-dir; exit 3"),
      // Hostile output: clear the screen, jump home, set the title; none of it may happen.
      bash("c3", "printf 'safe\\033[2J\\033[1;1HPWNED\\033]0;owned\\007\\n'"),
      { text: "All three ran." },
    ];
    await withTern(script, { args: ["--mode", "bypass"], rows: 40 }, async ({ tern }) => {
      await send(tern, "run them");
      const done = await tern.waitForText("All three ran.");
      const lines = rows(done);
      const seq = lines.findIndex((line) => /^✓ bash {2}seq 1 300/.test(line));
      ok(seq >= 0, done);
      equal(lines[seq + 1], "  … 297 more lines · Ctrl-O or /output 1");
      equal(lines[seq + 2], "  │ 298");
      equal(lines[seq + 4], "  │ 300");
      const failed = lines.findIndex((line) =>
        /^✗ bash {2}ls \/nonexistent-dir; exit 3/.test(line)
      );
      ok(failed >= 0 && lines[failed].includes("exit 3"), done);
      match(lines[failed + 1], /^ {2}│ ls: cannot access '\/nonexistent-dir': No such file/);
      const hostile = lines.findIndex((line) => line.includes("bash  printf"));
      ok(hostile >= 0, done);
      // The sequences never reach the terminal: the screen above is still there.
      equal(lines[hostile + 1], "  │ safePWNED");
      const title = await tern.tmux("display-message", "-p", "-t", tern.target, "#{pane_title}");
      ok(!title.includes("owned"), title);
      ok(seq >= 0 && lines.some((line) => line.startsWith("› run them")), "nothing was cleared");

      await send(tern, "/output 1");
      await tern.waitForText("── output 1 · bash  seq 1 300 · 300 lines");
      // The pager's header can be on screen before its lines: wait for the last one checked.
      const paged = await tern.waitForText("│ 150");
      const after = rows(paged);
      const header = after.findIndex((line) => line.includes("── output 1 · bash"));
      equal(after[header + 1], "│ 1");
      equal(after[header + 150], "│ 150");

      // Ctrl-O: the last command's whole output.
      await tern.keys("C-o");
      await tern.waitForText("── output 3 · bash  printf");
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive opens the slash menu on / and filters it as you type",
  async () => {
    const setup = async (dir: string, home: string) => {
      await Deno.mkdir(join(dir, ".tern", "skills", "lint-fix"), { recursive: true });
      await Deno.writeTextFile(
        join(dir, ".tern", "skills", "lint-fix", "SKILL.md"),
        "---\nname: lint-fix\ndescription: Fix the lint errors\n---\nRun the linter, fix.\n",
      );
      await Deno.mkdir(join(home, "prompts"), { recursive: true });
      await Deno.writeTextFile(
        join(home, "prompts", "review-staged.md"),
        "---\ndescription: Review the staged changes\n---\nReview the staged changes.\n",
      );
    };
    const script: Script = [{ text: "Reviewed." }];
    await withTern(script, { setup }, async ({ tern, server }) => {
      await tern.type("/");
      // Commands come with their descriptions (a frame may be caught half drawn: wait for both).
      await tern.waitFor(
        (screen) =>
          /\d+ commands · ↑↓ choose · Enter run/.test(screen) && /\/help +\S/.test(screen),
        "the slash menu, /help with its description",
      );
      await tern.type("skill");
      const skills = await tern.waitFor(
        (screen) => /› \/skill:lint-fix +Fix the lint errors/.test(screen),
        "the menu filtered to the skill",
        { scrollback: false },
      );
      match(skills, /1 command · ↑↓ choose/);
      await tern.keys("C-u");
      await tern.type("/");
      await tern.type("rev");
      const filtered = await tern.waitFor(
        (screen) => /› \/review-staged +Review the staged changes/.test(screen),
        "the menu filtered to the template",
        { scrollback: false },
      );
      match(filtered, /1 command · ↑↓ choose/);
      ok(!filtered.includes("/help "), "the menu is filtered");
      await tern.keys("Enter");
      await tern.waitForText("Reviewed.");
      equal(server.requests.length, 1);
      const sent = server.requests[0].modelRequest.messages.at(-1);
      equal(sent?.role === "user" && sent.content.trim(), "Review the staged changes.");
    });
  },
);

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive keeps Esc to stop on a narrow status line while it works",
  async () => {
    const script: Script = [
      bash("c1", "while [ ! -e go ]; do sleep 0.05; done; echo finished"),
      { text: "Done waiting." },
    ];
    await withTern(script, { args: ["--mode", "bypass"], columns: 60 }, async ({ tern, dir }) => {
      await send(tern, "wait for go");
      const working = await tern.waitFor(
        (screen) => /working \d+\.\ds/.test(rows(screen).filter((l) => l !== "").at(-1) ?? ""),
        "the working status",
        { scrollback: false },
      );
      const status = rows(working).filter((line) => line !== "").at(-1)!;
      ok(status.includes("Esc to stop"), status);
      await Deno.writeTextFile(join(dir, "go"), "");
      await tern.waitForText("Done waiting.");
    });
  },
);

/** The `working N.Ns` figure of the status line on `screen`. */
function workingOf(screen: string): string {
  const found = /working (\d+\.\d)s/.exec(screen);
  if (!found) throw new Error(`No working time on the screen:\n${screen}`);
  return found[1];
}

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive stops the turn's and the call's clocks while the approval dialog waits",
  async () => {
    const script: Script = [
      {
        toolCalls: [{
          id: "w1",
          name: "write",
          arguments: JSON.stringify({ path: "a.txt", content: "a\n" }),
        }],
      },
      { text: "Written." },
    ];
    await withTern(script, {}, async ({ tern }) => {
      await send(tern, "write a");
      const asked = workingOf(await tern.waitForText("[n] deny", { scrollback: false }));
      // Time passes while the person thinks: the figure must not move.
      const thought = 2_500;
      await new Promise((resolve) => setTimeout(resolve, thought));
      equal(workingOf(await tern.screen()), asked, "the turn's clock waits with the dialog");
      await tern.keys("y");
      const done = await tern.waitForText("Written.");
      const line = rows(done).find((row) => row.startsWith("✓ write  a.txt"));
      const seconds = Number(/(\d+\.\d)s$/.exec(line ?? "")?.[1]);
      ok(seconds * 1000 < thought, `the call's time leaves the wait out: ${line}`);
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive gives a one-line key hint on the very first start only",
  async () => {
    const hint =
      "• Enter sends · Shift+Enter new line · / commands · @ files · Esc stops the agent";
    const ws = await tempWorkspace();
    const server = await startScriptedServer([{ text: "Hello." }]);
    const start = () =>
      startTernInTmux({ cwd: ws.dir, home: ws.home, baseUrl: server.baseUrl, columns: 140 });
    try {
      const first = await start();
      try {
        await first.waitForText(hint, { timeoutMs: 60_000 });
        await send(first, "hi");
        await first.waitForText("Hello.");
        await quit(first);
      } finally {
        await first.close();
      }
      // Once a message was sent, the hint is not given again.
      const second = await start();
      try {
        const screen = await second.waitForText(PLACEHOLDER, { timeoutMs: 60_000 });
        ok(!screen.includes(hint), screen);
        await quit(second);
      } finally {
        await second.close();
      }
    } finally {
      await server.close();
      await ws.cleanup();
    }
  },
);

/** The lines of `screen` that are not blank, the status line last. */
const filled = (screen: string) => rows(screen).filter((line) => line !== "");

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive puts a queued message back into the editor on Esc instead of sending it",
  async () => {
    const script: Script = [
      bash("c1", "while [ ! -e go ]; do sleep 0.05; done"),
      { text: "Should not be asked for." },
    ];
    await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, server }) => {
      await send(tern, "wait for go");
      await tern.waitFor((screen) => RUNNING.test(screen), "the running command");
      await send(tern, "second thought");
      await tern.waitForText("⏎ queued (↑ edits): second thought");
      await tern.keys("Escape");
      const after = await tern.waitFor((screen) => {
        const lines = filled(screen);
        return !lines.at(-1)!.includes("working") && lines.at(-2) === "› second thought";
      }, "the queued text back in the editor");
      ok(!after.includes("⏎ queued"), after);
      equal(server.requests.length, 1, "no turn started with the queued text");
      await tern.keys("C-u");
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive /new resets the token count and the context meter",
  async () => {
    await withTern([{ text: "Counted." }], {}, async ({ tern }) => {
      await send(tern, "count me");
      const counted = await tern.waitFor(
        (screen) => /ctx \d+%/.test(filled(screen).at(-1)!),
        "the context meter",
        { scrollback: false },
      );
      ok(!/ 0 tok/.test(filled(counted).at(-1)!), filled(counted).at(-1));
      await send(tern, "/new");
      const fresh = await tern.waitForText("• new session");
      const status = filled(fresh).at(-1)!;
      ok(!status.includes("ctx "), status);
      ok(!/\d tok/.test(status) || status.includes(" 0 tok"), status);
      await tern.waitFor(
        (screen) => filled(screen).at(-2)?.includes(PLACEHOLDER) === true,
        "the empty editor after /new",
        { scrollback: false },
      );
    });
  },
);

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive says calmly that the person stopped a command, with what it printed",
  async () => {
    const script: Script = [
      bash("c1", "echo one; echo two; while [ ! -e go ]; do sleep 0.05; done"),
      { text: "Should not be asked for." },
    ];
    await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, server }) => {
      await send(tern, "print and wait");
      await tern.waitFor((screen) => /│ two/.test(screen), "the output streaming");
      await tern.keys("Escape");
      const done = await tern.waitForText("■ stopped · 2 lines of output kept");
      const lines = rows(done);
      const call = lines.findIndex((line) => /^■ bash {2}echo one; .* {2}stopped/.test(line));
      ok(call >= 0, done);
      equal(lines[call + 1], "  │ one");
      equal(lines[call + 2], "  │ two");
      ok(!done.includes("CANCELLED") && !done.includes("output so far"), done);
      equal(server.requests.length, 1);
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive keeps retries of a model call off the scrollback",
  async () => {
    const script: Script = [
      { fault: "http429", retryAfter: "0" },
      { fault: "http429", retryAfter: "0" },
      { text: "Recovered." },
    ];
    await withTern(script, {}, async ({ tern, server }) => {
      await send(tern, "try hard");
      const done = await tern.waitFor(
        (screen) => screen.includes("Recovered.") && /─ 1 round/.test(screen),
        "the answer after the retries",
      );
      equal(server.requests.length, 3);
      ok(!done.includes("model call failed"), done);
    });
  },
);

testWith([tmuxNeed], "tern interactive counts one match and one line in the singular", async () => {
  const setup = async (dir: string) => {
    await Deno.writeTextFile(join(dir, "one.txt"), "a needle here\n");
  };
  const script: Script = [
    {
      toolCalls: [
        { id: "g1", name: "grep", arguments: JSON.stringify({ pattern: "needle" }) },
        { id: "r1", name: "read", arguments: JSON.stringify({ path: "one.txt" }) },
      ],
    },
    { text: "Found it." },
  ];
  await withTern(script, { setup }, async ({ tern }) => {
    await send(tern, "find the needle");
    const done = rows(await tern.waitForText("Found it."));
    ok(done.some((line) => /^✓ grep {2}needle {2}1 match {2}\d/.test(line)), done.join("\n"));
    ok(done.some((line) => /^✓ read {2}one\.txt {2}1 line {2}\d/.test(line)), done.join("\n"));
  });
});
