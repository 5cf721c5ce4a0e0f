/**
 * A command typed while a turn runs: a prompt template or a skill is never handed to the model as
 * the bare `/name args` steering text, and a line that cannot run now goes back into the editor
 * rather than being lost. A message that mentions a file waits for the turn's end, where the
 * file is attached, rather than reaching the model as a bare `@path`. The real app, editor, registry and a Conversation on a real session,
 * with the in-process scripted model.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { key, textKey } from "../../src/tui/key_event.ts";
import { expandMentions } from "../../src/tui/mentions.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { commandsWithResources, testApp } from "../support/interactive_app.ts";

await loadRenderers();

async function setUp() {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-ws-" }));
  const prompts = join(workspace, ".tern", "prompts");
  await Deno.mkdir(prompts, { recursive: true });
  await Deno.writeTextFile(join(prompts, "review.md"), "REVIEW-MARK $ARGUMENTS");
  await Deno.writeTextFile(join(workspace, "a.txt"), "hello");
  let switched = 0;
  const commands = await commandsWithResources([{
    name: "new",
    description: "built-in that waits for the turn",
    run: () => void switched++,
  }], { workspace, ternHome });
  // A tool call first: the turn has a model boundary where queued messages go to the model.
  const provider = new ScriptedProvider([
    { toolCalls: [{ id: "r", name: "read", arguments: JSON.stringify({ path: "a.txt" }) }] },
    { text: "first turn done" },
    { text: "template answered" },
  ], { delayMs: 150 });
  const app = testApp({
    workspace,
    ternHome,
    commands,
    provider,
    // As the interactive UI prepares a turn's message: its `@path` mentions attached.
    prepareMessage: async (text, typed) => {
      const expanded = await expandMentions(text, workspace, { from: typed });
      return { text: expanded.text, notes: expanded.errors };
    },
  });
  const cleanup = async () => {
    await app.close();
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  };
  return { ...app, provider, switched: () => switched, cleanup };
}

Deno.test("InteractiveApp never sends a template typed during a turn as bare steering text", async () => {
  const t = await setUp();
  try {
    t.app.key(textKey("start"));
    t.app.key(key("enter"));
    ok(t.app.running);
    t.app.key(textKey("/review the diff"));
    t.app.key(key("enter"));
    await t.app.idle;
    // The first turn's requests never held the typed command; it waits in the editor.
    equal(t.provider.requests.length, 2);
    for (const request of t.provider.requests) {
      ok(!JSON.stringify(request.messages).includes("/review"), JSON.stringify(request.messages));
    }
    equal(t.editor.text, "/review the diff");
    ok(t.committed.some((line) => line.includes("/review waits for the turn to end")));
    // Sent once the turn has ended, it is the template's text.
    t.app.key(key("enter"));
    await t.app.idle;
    equal(t.provider.requests.length, 3);
    equal(t.provider.requests[2].messages.at(-1)?.content, "REVIEW-MARK the diff");
  } finally {
    await t.cleanup();
  }
});

Deno.test("InteractiveApp puts a command refused during a turn back into the editor", async () => {
  const t = await setUp();
  try {
    t.app.key(textKey("start"));
    t.app.key(key("enter"));
    t.app.key(textKey("/new"));
    t.app.key(key("enter"));
    equal(t.editor.text, "/new");
    equal(t.switched(), 0);
    await t.app.idle;
    t.app.key(key("enter"));
    await t.app.idle;
    equal(t.switched(), 1);
  } finally {
    await t.cleanup();
  }
});

Deno.test("InteractiveApp starts a message that mentions a file as the next turn, the file attached", async () => {
  const t = await setUp();
  try {
    t.app.key(textKey("start"));
    t.app.key(key("enter"));
    t.app.key(textKey("look at @a.txt"));
    t.app.key(key("enter"));
    await t.app.idle;
    // The first turn ended without it; the next turn got it with the file.
    equal(t.provider.requests.length, 3);
    for (const request of t.provider.requests.slice(0, 2)) {
      ok(!JSON.stringify(request.messages).includes("look at"), JSON.stringify(request.messages));
    }
    const sent = String(t.provider.requests[2].messages.at(-1)?.content);
    ok(sent.startsWith("look at @a.txt"), sent);
    ok(sent.includes('<file path="a.txt">\nhello'), sent);
  } finally {
    await t.cleanup();
  }
});
