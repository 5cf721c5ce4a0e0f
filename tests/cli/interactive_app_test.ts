/**
 * The interactive controller with its real parts (editor, transcript view, status line, slash
 * commands, a Conversation writing a real session) and the in-process scripted model.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { DIALOG_GUARD_MS, InteractiveApp } from "../../src/cli/interactive/app.ts";
import { CommandRegistry } from "../../src/cli/interactive/commands.ts";
import { DEFAULTS } from "../../src/config/mod.ts";
import type { Script } from "../../src/llm/scripted.ts";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { Session } from "../../src/session/session.ts";
import { Editor } from "../../src/tui/editor.ts";
import { key, textKey } from "../../src/tui/key_event.ts";
import { selectDialog } from "../../src/tui/select_dialog.ts";
import { permissionDialog } from "../../src/tui/dialogs.ts";
import type { ReviewRequest } from "../../src/sandbox/review.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { testApp } from "../support/interactive_app.ts";

// Exact widths, Markdown and diffs, as the interactive session has them once its prompt is up.
await loadRenderers();

interface Harness {
  app: InteractiveApp;
  committed: string[];
  frame: () => string[];
  provider: ScriptedProvider;
  session: Session;
  editor: Editor;
  exits: () => number;
  /** Moves the app's clock on by `ms` (a dialog takes keys only once it has been seen). */
  advance(ms: number): void;
  close(): Promise<void>;
}

type ContextFactory = ConstructorParameters<typeof InteractiveApp>[0]["commandContext"];

async function harness(
  script: Script,
  commands = new CommandRegistry(),
  commandContext: ContextFactory = () => {
    throw new Error("no command context in this test");
  },
  contextWindow = DEFAULTS.contextWindow,
): Promise<Harness> {
  const ternHome = await Deno.makeTempDir({ prefix: "tern-app-home-" });
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-app-ws-" }));
  const provider = new ScriptedProvider(script, { delayMs: 2 });
  let exits = 0;
  // The app's clock stands still unless a test moves it (a dialog's guard time is exact).
  const start = Date.now();
  let offset = 0;
  const test = testApp({
    workspace,
    ternHome,
    commands,
    provider,
    commandContext,
    contextWindow,
    onExit: () => exits++,
    now: () => start + offset,
  });
  return {
    ...test,
    provider,
    exits: () => exits,
    advance: (ms) => offset += ms,
    close: async () => {
      await test.close();
      await Deno.remove(ternHome, { recursive: true });
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

function type(app: InteractiveApp, text: string): void {
  app.key(textKey(text));
  app.key(key("enter"));
}

Deno.test("InteractiveApp runs a turn for a submitted line and commits the answer once", async () => {
  const h = await harness([{ text: "Hello **there**." }]);
  try {
    type(h.app, "say hello");
    await h.app.idle;
    const text = h.committed.join("\n");
    ok(text.includes("say hello"), text);
    equal(h.committed.filter((line) => line.includes("Hello there.")).length, 1, text);
    ok(h.committed.some((line) => line.startsWith("─ 1 round")), text);
    // The message went to the model and into the session.
    deepEqual(h.provider.requests[0].messages.at(-1), { role: "user", content: "say hello" });
    const users = h.session.state().items.filter((item) => item.message.role === "user");
    equal(users.length, 1);
    // The prompt is back: the live frame ends with the editor and the status line.
    ok(h.frame().some((line) => line.includes("ask tern")), h.frame().join("\n"));
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp queues a line typed during a turn and sends it as the next turn", async () => {
  const h = await harness([{ text: "first answer" }, { text: "second answer" }]);
  try {
    type(h.app, "first");
    type(h.app, "also this");
    deepEqual(h.app.queued, ["also this"]);
    ok(h.frame().some((line) => line.includes("also this")), "the queued message is shown");
    await h.app.idle;
    equal(h.provider.requests.length, 2);
    deepEqual(h.provider.requests[1].messages.at(-1), { role: "user", content: "also this" });
    deepEqual(h.app.queued, []);
    ok(h.committed.some((line) => line.includes("second answer")));
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp gives back a steering message the context window cannot hold", async () => {
  const h = await harness(
    [{ toolCalls: [{ id: "c0", name: "nosuch", arguments: "{}" }] }, { text: "done" }],
    new CommandRegistry(),
    undefined,
    6_000,
  );
  try {
    // The window holds the turn's requests (the system prompt and tools take some thousands of
    // tokens: a request over the window is not sent at all), but not this message.
    const huge = "word ".repeat(8_000);
    type(h.app, "first");
    // Typed while the turn runs: steering messages, taken after the tool call.
    type(h.app, "small STEER-MARK");
    type(h.app, huge.trim());
    await h.app.idle;
    equal(h.provider.requests.length, 2);
    const sent = JSON.stringify(h.provider.requests[1].messages);
    ok(sent.includes("STEER-MARK"), sent);
    ok(!sent.includes("word word"), "the message the window cannot hold was sent");
    // Nothing is lost: it is back in the editor, and the person was told why.
    equal(h.editor.text, huge.trim());
    ok(h.committed.some((line) => line.includes("Cannot send a message")), h.committed.join("\n"));
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp stops a running turn on Esc and says it stopped", async () => {
  const h = await harness([{ fault: "hang" }, { text: "after" }]);
  try {
    type(h.app, "wait forever");
    // Let the model call start, then press Esc.
    while (h.provider.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    h.app.key(key("escape"));
    await h.app.idle;
    ok(!h.app.running);
    ok(h.committed.some((line) => line.includes("■ stopped")), h.committed.join("\n"));
    // The next line starts a new turn normally.
    type(h.app, "again");
    await h.app.idle;
    ok(h.committed.some((line) => line.includes("after")));
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp exits on Ctrl-D, and on Ctrl-C only when pressed twice", async () => {
  const h = await harness([]);
  try {
    h.app.key(textKey("draft"));
    h.app.key(key("c", { ctrl: true }));
    equal(h.exits(), 0, "the first Ctrl-C clears the editor");
    h.app.key(key("c", { ctrl: true }));
    equal(h.exits(), 0, "a Ctrl-C on the empty editor only warns");
    ok(h.frame().some((line) => line.includes("Ctrl-C again")), h.frame().join("\n"));
    h.app.key(key("c", { ctrl: true }));
    equal(h.exits(), 1);
  } finally {
    await h.close();
  }
  const d = await harness([]);
  try {
    d.app.key(key("d", { ctrl: true }));
    equal(d.exits(), 1);
  } finally {
    await d.close();
  }
});

Deno.test("InteractiveApp runs slash commands, refuses unknown ones and shows dialogs", async () => {
  const seen: string[] = [];
  const commands = new CommandRegistry([{
    name: "pick",
    description: "pick a colour",
    run: async (context, args) => {
      const choice = await context.pick(selectDialog({
        theme: context.theme,
        title: "Colour",
        items: [{ label: "red", value: "red" }, { label: "blue", value: "blue" }],
      }));
      seen.push(`${args}:${choice}`);
    },
  }]);
  // Only what the command uses of its context.
  const context = (self: InteractiveApp) =>
    ({ theme: themeFor(false), pick: (dialog) => self.pick(dialog) }) as Pick<
      ReturnType<ContextFactory>,
      "theme" | "pick"
    > as ReturnType<ContextFactory>;
  const h = await harness([], commands, context);
  const app = h.app;
  try {
    type(app, "/nope");
    ok(
      h.committed.some((line) => line.includes('Unknown command "/nope"')),
      h.committed.join("\n"),
    );
    type(app, "/pick now");
    h.advance(DIALOG_GUARD_MS);
    app.key(key("down"));
    app.key(key("enter"));
    await app.idle;
    deepEqual(seen, ["now:blue"]);
    equal(h.provider.requests.length, 0, "commands never reach the model");
  } finally {
    await h.close();
  }
});

/** `promise`'s value, or "pending" when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"pending">((resolve) => timer = setTimeout(resolve, ms, "pending"));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const RM: ReviewRequest = {
  tool: "bash",
  args: { command: "rm -rf build" },
  summary: "rm -rf build",
  reason: "destructive: deletes files (rm -rf)",
  profile: ":workspace",
  rememberable: true,
};

/** A /pick command that opens a picker and records what it got. */
function pickCommand(seen: unknown[]) {
  const commands = new CommandRegistry([{
    name: "pick",
    description: "pick a colour",
    run: async (context) => {
      seen.push(
        await context.pick(selectDialog({
          theme: context.theme,
          title: "Colour",
          items: [{ label: "red", value: "red" }, { label: "blue", value: "blue" }],
        })),
      );
    },
  }]);
  const context = (self: InteractiveApp) =>
    ({ theme: themeFor(false), pick: (dialog) => self.pick(dialog) }) as Pick<
      ReturnType<ContextFactory>,
      "theme" | "pick"
    > as ReturnType<ContextFactory>;
  return { commands, context };
}

Deno.test("InteractiveApp.exit() answers every open dialog: a picker with nothing, a question with a denial", async () => {
  const seen: unknown[] = [];
  const { commands, context } = pickCommand(seen);
  const h = await harness([], commands, context);
  try {
    // No signal ends this question: only the exit can. Its reason field is open (where Esc
    // goes back rather than answering), and a picker waits behind it.
    const question = h.app.pick(permissionDialog(RM, { theme: themeFor(false) }));
    h.advance(DIALOG_GUARD_MS);
    h.app.key(textKey("r"));
    ok(h.frame().some((line) => line.includes("Reason for the model")), h.frame().join("\n"));
    h.app.submit("/pick now");
    h.app.exit();
    equal(await within(h.app.idle, 2_000), undefined, "the command waiting on its picker ended");
    deepEqual(seen, [undefined], "the picker answered as cancelled");
    equal(await within(question, 2_000), "deny", "the permission question answered as a denial");
    const late = h.app.pick(selectDialog({ theme: themeFor(false), title: "Late", items: [] }));
    equal(await within(late, 2_000), undefined, "a dialog asked after the exit answers at once");
    equal(h.exits(), 1);
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp.pick() shows a dialog asked while another is open after it, losing neither", async () => {
  const seen: unknown[] = [];
  const { commands, context } = pickCommand(seen);
  const h = await harness([], commands, context);
  try {
    type(h.app, "/pick now");
    const question = h.app.pick(permissionDialog(RM, { theme: themeFor(false) }));
    ok(h.frame().includes("Colour"), "the picker stays on screen, under the person's keys");
    h.advance(DIALOG_GUARD_MS);
    h.app.key(key("down"));
    h.app.key(key("enter"));
    await h.app.idle;
    deepEqual(seen, ["blue"]);
    ok(h.frame().some((line) => line.includes("Allow bash?")), h.frame().join("\n"));
    h.advance(DIALOG_GUARD_MS);
    h.app.key(textKey("y"));
    equal(await within(question, 2_000), "once");
  } finally {
    await h.close();
  }
});

Deno.test("InteractiveApp drops keys that reach a dialog before the person could have seen it", async () => {
  const h = await harness([]);
  try {
    // A follow-up message typed while the model works: the question opens under its keys.
    h.app.key(textKey("please also"));
    const question = h.app.pick(permissionDialog(RM, { theme: themeFor(false) }));
    h.app.key(textKey("a"));
    h.app.key(textKey("y"));
    h.app.key(key("enter"));
    h.advance(DIALOG_GUARD_MS - 1);
    h.app.key(textKey("y"));
    equal(await within(question, 50), "pending", "no key typed in the guard time answered");
    ok(
      h.frame().some((line) => line.includes("Keys typed as this dialog opened were ignored")),
      h.frame().join("\n"),
    );
    ok(h.frame().some((line) => line.includes("Allow bash?")), "the question is still open");
    // Each dropped key starts the time again; after a pause the person's answer counts.
    h.advance(DIALOG_GUARD_MS);
    h.app.key(textKey("n"));
    equal(await within(question, 2_000), "deny");
    equal(h.editor.text, "please also", "the dropped keys reached neither dialog nor editor");
    // A dialog waiting behind another gets its own guard time when it comes up.
    const first = h.app.pick(permissionDialog(RM, { theme: themeFor(false) }));
    const second = h.app.pick(permissionDialog(RM, { theme: themeFor(false) }));
    h.advance(DIALOG_GUARD_MS);
    h.app.key(textKey("n"));
    equal(await within(first, 2_000), "deny");
    h.app.key(textKey("y"));
    equal(
      await within(second, 50),
      "pending",
      "a key typed for the first does not answer the second",
    );
    // Ctrl-C cancels at once: a denial is always safe.
    h.app.key(key("c", { ctrl: true }));
    equal(await within(second, 2_000), "deny");
    // A picker too.
    const picked = h.app.pick(selectDialog({
      theme: themeFor(false),
      title: "Compact?",
      items: [{ label: "No", value: false }, { label: "Yes", value: true }],
    }));
    h.app.key(key("down"));
    h.app.key(key("enter"));
    equal(await within(picked, 50), "pending");
    h.advance(DIALOG_GUARD_MS);
    h.app.key(key("enter"));
    equal(await within(picked, 2_000), false, "the highlight did not move either");
  } finally {
    await h.close();
  }
});
