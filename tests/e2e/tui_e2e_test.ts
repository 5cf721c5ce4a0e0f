/**
 * The interactive UI end to end: the real `tern` (main.ts, the declared permissions) runs in a
 * tmux pane against the scripted model server in this process; keys go in with send-keys and
 * the screen comes back with capture-pane. Tool calls run for real (bubblewrap, files).
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Script, ScriptedReply } from "../../src/llm/scripted.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { processesMatching, type TmuxTern } from "../support/tmux.ts";
import {
  dialogReady,
  PLACEHOLDER,
  quit,
  send,
  sessionEntries,
  sessionMessages,
  waitUntil,
  withTern,
} from "../support/tmux_run.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

// Exact widths for the layout checks below, as tern has them once its prompt is up.
await loadRenderers();

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

const RUNNING_BASH = /[\u2800-\u28ff] bash /;

const writeScript = (): ScriptedReply[] => [
  {
    toolCalls: [{
      id: "c1",
      name: "write",
      arguments: JSON.stringify({ path: "hello.txt", content: "hi there\n" }),
    }],
  },
  { text: "I wrote **hello.txt** for you." },
];

testWith([tmuxNeed], "tern interactive runs a turn with a write approved with y", async () => {
  await withTern(writeScript(), {}, async ({ tern, server, dir, home }) => {
    await send(tern, "please write hello");
    const dialog = await tern.waitForText("[y] allow once   [a] allow for this session   [n] deny");
    match(dialog, /Allow write\?/);
    match(dialog, /^1 \+ hi there$/m, "the dialog shows the proposed diff, numbered");
    equal(await exists(join(dir, "hello.txt")), false, "nothing is written before the answer");

    await dialogReady();
    await tern.keys("y");
    const done = await tern.waitForText("─ 2 rounds · 1 tool");
    match(done, /^✓ write {2}hello\.txt/m);
    match(done, /allowed by person \(once\)/);
    match(done, /^I wrote hello\.txt for you\.$/m);
    ok(!done.includes("Allow write?"), "the dialog is gone once answered");
    equal(await Deno.readTextFile(join(dir, "hello.txt")), "hi there\n");
    equal(server.requests.length, 2);

    match(await quit(tern), /TERN_EXIT=0/);
    const messages = (await sessionMessages(home)).map((entry) => entry.message);
    ok(messages.some((m) => m.role === "user" && m.content === "please write hello"), "user");
    const result = messages.find((m) => m.role === "tool");
    equal(result?.role === "tool" && result.toolCallId, "c1");
    match(result?.content ?? "", /^SUCCEEDED/);
  });
});

testWith(
  [tmuxNeed],
  "tern interactive denies a write answered with n and writes nothing",
  async () => {
    const script = writeScript();
    script[1] = { text: "Could not write it." };
    await withTern(script, {}, async ({ tern, server, dir }) => {
      await send(tern, "please write hello");
      await tern.waitForText("Allow write?");
      await dialogReady();
      await tern.keys("n");
      const done = await tern.waitForText("─ 2 rounds · 1 tool");
      match(done, /^⊘ write {2}hello\.txt {2}denied/m);
      match(done, /denied by person/);
      equal(await exists(join(dir, "hello.txt")), false);
      const observation = server.requests[1].modelRequest.messages.at(-1);
      equal(observation?.role, "tool");
      match(observation?.content ?? "", /^ERROR\[POLICY_DENIED\]/);
    });
  },
);

Deno.test({
  name: "tern interactive Escape cancels a long bash call and kills its processes",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
}, async () => {
  // A duration no other process on the machine has, to find this sleep (and only it) by name.
  const sleep = `sleep 31.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  const script: Script = [
    {
      toolCalls: [{
        id: "c1",
        name: "bash",
        arguments: JSON.stringify({ command: `${sleep}; echo done > marker` }),
      }],
    },
    { text: "This reply must never be requested." },
  ];
  await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, server, dir }) => {
    await send(tern, "run the long thing");
    await tern.waitFor((screen) => RUNNING_BASH.test(screen), "the running bash line");
    await waitUntil(async () => (await processesMatching(sleep)).length > 0, sleep);

    await tern.keys("Escape");
    const cancelled = await tern.waitForText("■ stopped");
    ok(
      cancelled.split("\n").some((line) =>
        line.startsWith(`■ bash  ${sleep}; echo done > marker  stopped`)
      ),
      cancelled,
    );
    ok(!cancelled.includes("CANCELLED") && !cancelled.includes("output so far"), cancelled);
    await tern.waitFor(
      (screen) => screen.includes(PLACEHOLDER) && !screen.includes("working"),
      "the prompt back and nothing working",
    );
    await waitUntil(
      async () => (await processesMatching(sleep)).length === 0,
      "the sleep process and its sandbox to end",
    );
    equal(await exists(join(dir, "marker")), false);
    equal(server.requests.length, 1, "no model call after the cancel");
  });
});

Deno.test({
  name: "tern interactive sends a message typed during a tool call at the next model call",
  ignore: !bwrapNeed.ok || !tmuxNeed.ok,
}, async () => {
  // The tool waits for a file the test creates once the message is queued: no race on time.
  const script: Script = [
    {
      toolCalls: [{
        id: "c1",
        name: "bash",
        arguments: JSON.stringify({
          command: "while [ ! -e go ]; do sleep 0.05; done; echo tool-finished",
        }),
      }],
    },
    { text: "Answer after steering." },
  ];
  await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, server, dir }) => {
    await send(tern, "first task alpha");
    await tern.waitFor((screen) => RUNNING_BASH.test(screen), "the running bash line");
    await send(tern, "also do beta");
    await tern.waitFor(
      (screen) => /^⏎ queued \(↑ edits\): also do beta$/m.test(screen),
      "the queued line",
    );
    equal(server.requests.length, 1, "a queued message waits for the model boundary");

    await Deno.writeTextFile(join(dir, "go"), "");
    const done = await tern.waitForText("─ 2 rounds · 1 tool");
    match(done, /^✓ bash /m);
    match(done, /^⏎ also do beta$/m, "the transcript shows the message as sent");
    ok(!(await tern.screen()).includes("queued:"), "nothing is left queued");
    equal(server.requests.length, 2, "the message did not start a turn of its own");
    const tail = server.requests[1].modelRequest.messages.slice(-2);
    equal(tail[0].role, "tool");
    equal(tail[0].role === "tool" && tail[0].toolCallId, "c1");
    match(tail[0].content, /tool-finished/);
    deepEqual(tail[1], { role: "user", content: "also do beta" });
  });
});

testWith(
  [tmuxNeed],
  "tern interactive /tree continues from the first message, leaving the second turn",
  async () => {
    const script: Script = [
      { text: "Answer one." },
      { text: "Second answer." },
      { text: "Third answer." },
    ];
    await withTern(script, {}, async ({ tern, server, home }) => {
      await send(tern, "first task alpha");
      await tern.waitForText("Answer one.");
      await send(tern, "second task gamma");
      await tern.waitForText("Second answer.");
      await tern.waitFor((screen) => screen.includes(PLACEHOLDER), "the prompt");

      await send(tern, "/tree");
      const picker = await tern.waitForText("Continue from");
      match(picker, /● assistant: Second answer\./, "the current leaf is marked");
      await dialogReady();
      await tern.type("alpha");
      await tern.waitFor(
        (screen) => /filter: alpha/.test(screen) && /^› user: first task alpha/m.test(screen),
        "the filtered picker",
      );
      await tern.keys("Enter");
      await tern.waitForText("continuing from");
      await send(tern, "third task delta");
      await tern.waitForText("Third answer.");

      const messages = server.requests[2].modelRequest.messages;
      const texts = messages.map((m) => `${m.role}: ${m.content}`);
      ok(texts.includes("user: first task alpha"), texts.join("\n"));
      ok(!texts.includes("user: second task gamma"), texts.join("\n"));
      ok(!messages.some((m) => m.role === "assistant"), texts.join("\n"));
      equal(texts.at(-1), "user: third task delta");

      match(await quit(tern), /TERN_EXIT=0/);
      const entries = await sessionEntries(home);
      const first = (await sessionMessages(home)).find((entry) =>
        entry.message.content === "first task alpha"
      );
      const branch = entries.find((entry) => entry.type === "branch");
      ok(branch, "the session has a branch entry");
      equal(branch.parentId, first?.id, "the branch hangs under the picked entry");
    });
  },
);

/**
 * Checks that the live region is drawn once and fits `columns`: the status line is the last
 * line, the empty editor right above it, the turn's footer right above that, and neither the
 * status line nor the editor appear anywhere else. Returns a reason, or undefined when fine.
 */
function layoutProblem(screen: string, columns: number): string | undefined {
  const lines = screen.replace(/\n+$/, "").split("\n");
  const status = lines.at(-1) ?? "";
  // The folder starts it, the model follows, the context share is one of the last parts.
  if (!/^\/\S+ · scripted-model · .*ctx \d+%/.test(status)) return "the last line is no status";
  if (visibleWidth(status) > columns) return "the status line is wider than the pane";
  if (lines.at(-2) !== `› ${PLACEHOLDER}`) return "the editor is not right above the status";
  if (!lines.at(-3)?.startsWith("─ 1 round")) return "the footer is not right above the editor";
  const count = (needle: string) => lines.filter((line) => line.includes(needle)).length;
  if (count(PLACEHOLDER) !== 1) return "the editor is drawn more than once";
  if (count("scripted-model") !== 1 || count("ctx ") !== 1) return "a status line is left over";
  if (count("─ 1 round") !== 1) return "the footer is drawn more than once";
  return undefined;
}

/** Waits for a clean layout at `columns` (see `layoutProblem`); the error says what was wrong. */
async function waitForLayout(
  tern: TmuxTern,
  columns: number,
  also: (screen: string) => boolean = () => true,
): Promise<string> {
  let problem: string | undefined;
  try {
    return await tern.waitFor((screen) => {
      problem = layoutProblem(screen, columns);
      return problem === undefined && also(screen);
    }, `a clean layout at ${columns} columns`);
  } catch (error) {
    throw new Error(`${problem ?? "The layout is clean but incomplete"}: ${error}`);
  }
}

testWith(
  [tmuxNeed],
  "tern interactive redraws the live region once after the window narrows and widens",
  async () => {
    const answer = Array.from(
      { length: 8 },
      (_, i) => `Paragraph ${i + 1} is a line of text wider than fifty columns, so it rewraps.`,
    ).join("\n\n");
    await withTern([{ text: answer }], { columns: 100, rows: 30 }, async ({ tern }) => {
      await send(tern, "tell me a lot");
      await waitForLayout(tern, 100);

      await tern.resize(50, 20);
      deepEqual(await tern.size(), { columns: 50, rows: 20 });
      // tmux re-flows the committed text mid-word; tern draws the rows still on screen again.
      const narrow = await waitForLayout(
        tern,
        50,
        (screen) => /^Paragraph 8 is a line of text wider than fifty\ncolumns, so/m.test(screen),
      );
      match(narrow, /^columns, so it rewraps\.$/m);

      await tern.resize(100, 30);
      // The rows written at 50 columns are drawn again at 100.
      const full = /^Paragraph 8 is a line of text wider than fifty columns, so it rewraps\.$/m;
      await waitForLayout(
        tern,
        100,
        (screen) => screen.includes("think medium") && full.test(screen),
      );
    });
  },
);

testWith(
  [tmuxNeed],
  "tern interactive shows combining and wide characters at their real width",
  async () => {
    // 12 × "café" with a combining accent: 59 cells, one row of a 60-column pane. The bound the
    // first frame measures with counts the accent as a cell (71 cells): the answer, drawn once
    // the width libraries are in, must not wrap.
    const line = Array.from({ length: 12 }, () => "cafe\u0301").join(" ");
    const wide = "日本語のテキスト 👍 ok";
    await withTern(
      [{ text: `${line}\n\n${wide}` }],
      { columns: 60, rows: 20 },
      async ({ tern }) => {
        await send(tern, "accents please");
        const screen = await tern.waitForText("👍 ok");
        const rows = screen.split("\n").map((row) => row.normalize("NFC").trimEnd());
        ok(rows.includes(line.normalize("NFC")), screen);
        ok(rows.includes(wide), screen);
        match(await quit(tern), /TERN_EXIT=0/);
      },
    );
  },
);

testWith(
  [tmuxNeed],
  "tern with stdin and stdout piped answers each line in plain text and exits 0",
  async () => {
    const ws = await tempWorkspace();
    const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-e2e-tmp-" }));
    const server = await startScriptedServer([{ text: "Line mode answer." }]);
    try {
      const env = {
        TERN_HOME: ws.home,
        HOME: ws.home,
        TMPDIR: tmp,
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "x",
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      };
      const out = await runTernWithInput([], "hello\n", { cwd: ws.dir, env });
      const stdout = out.stdout;
      equal(out.code, 0, out.stderr);
      match(stdout, /^› hello$/m);
      match(stdout, /^Line mode answer\.$/m);
      match(stdout, /^─ 1 round · 0 tools/m);
      ok(!stdout.includes("\x1b"), "line mode writes no escape sequences");
      deepEqual(server.requests[0].modelRequest.messages.at(-1), {
        role: "user",
        content: "hello",
      });
      deepEqual([...Deno.readDirSync(tmp)], [], "tern removes its temporary folder");
    } finally {
      await server.close();
      await ws.cleanup();
      await Deno.remove(tmp, { recursive: true });
    }
  },
);

testWith(
  [tmuxNeed],
  "tern interactive exits on Ctrl-C twice and gives the terminal back",
  async () => {
    await withTern([], {}, async ({ tern }) => {
      await tern.keys("C-c");
      const warned = await tern.waitForText("press Ctrl-C again to exit");
      ok(!warned.includes("TERN_EXIT="), "one Ctrl-C does not exit");
      await tern.keys("C-c");
      match(await tern.waitForText("TERN_EXIT="), /TERN_EXIT=0/);
      await terminalRestored(tern);
    });
  },
);

testWith([tmuxNeed], "tern interactive exits on Ctrl-D only when the editor is empty", async () => {
  await withTern([], {}, async ({ tern }) => {
    await tern.type("draft");
    await tern.waitFor((screen) => /^› draft$/m.test(screen), "the draft");
    await tern.keys("C-d");
    await tern.keys("C-c");
    // Ctrl-C clears the draft; had Ctrl-D exited, the placeholder would not come back.
    await tern.waitFor((screen) => screen.includes(`› ${PLACEHOLDER}`), "the cleared editor");
    ok(!(await tern.screen()).includes("TERN_EXIT="));
    const exited = await quit(tern);
    match(exited, /TERN_EXIT=0/);
    // Nothing was sent: the empty session is gone, and no session is promised.
    ok(!/continue it with tern -c/.test(exited), exited);
    await terminalRestored(tern);
  });
});

/** The shell after tern reads a typed line (echo, canonical input) and the cursor shows. */
async function terminalRestored(tern: TmuxTern): Promise<void> {
  await tern.waitForText("shell$");
  equal(
    (await tern.tmux("display-message", "-p", "-t", tern.target, "#{cursor_flag}")).trim(),
    "1",
  );
  await send(tern, "echo ok-$((1+1))");
  const screen = await tern.waitFor((s) => /^ok-2$/m.test(s), "the shell's answer");
  match(screen, /^shell\$ echo ok-\$\(\(1\+1\)\)$/m, "typed input is echoed");
}

testWith(
  [tmuxNeed],
  "tern interactive ends in order on SIGTERM: exit 0, temporary folder removed",
  async () => {
    await withTern([], {}, async ({ tern }) => {
      const panePid = (await tern.tmux("display-message", "-p", "-t", tern.target, "#{pane_pid}"))
        .trim();
      const children = await new Deno.Command("ps", {
        args: ["-o", "pid=", "--ppid", panePid],
        stdout: "piped",
      }).output();
      const pids = new TextDecoder().decode(children.stdout).trim().split(/\s+/).filter(Boolean);
      equal(pids.length, 1, "the pane's shell runs tern alone");
      Deno.kill(Number(pids[0]), "SIGTERM");
      // withTern then checks TERN_EXIT=0 and that the temporary folder is gone.
      await tern.waitForText("TERN_EXIT=");
    });
  },
);
