/**
 * Prompt templates named with capitals or dots (`Save.md`, `fix.v2.md`) run from the
 * interactive UI as `tern run` runs them, and one named like a built-in in another case
 * (`Help.md`) never takes its place. The real app, editor, registry and a Conversation on a
 * real session, with the in-process scripted model.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { commandsWithResources, testApp } from "../support/interactive_app.ts";

await loadRenderers();

Deno.test("the interactive UI runs templates named with capitals or dots, never over a built-in", async () => {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-ws-" }));
  const prompts = join(workspace, ".tern", "prompts");
  await Deno.mkdir(prompts, { recursive: true });
  await Deno.writeTextFile(join(prompts, "Save.md"), "SAVE-MARK $ARGUMENTS");
  await Deno.writeTextFile(join(prompts, "fix.v2.md"), "FIX-MARK $ARGUMENTS");
  await Deno.writeTextFile(join(prompts, "Help.md"), "HELP-TEMPLATE-MARK");
  const warnings: string[] = [];
  let helped = 0;
  const commands = await commandsWithResources(
    [{ name: "help", description: "built-in", run: () => void helped++ }],
    { workspace, ternHome },
    (text) => warnings.push(text),
  );
  match(warnings.join("\n"), /Help\.md" is not offered as \/Help: a built-in command/);

  const provider = new ScriptedProvider([{ text: "one" }, { text: "two" }], { delayMs: 1 });
  const { send, committed, close } = testApp({ workspace, ternHome, commands, provider });
  try {
    await send("/Save the notes");
    equal(provider.requests[0].messages.at(-1)?.content, "SAVE-MARK the notes");
    await send("/fix.v2 the bug");
    equal(provider.requests[1].messages.at(-1)?.content, "FIX-MARK the bug");
    await send("/Help");
    await send("/HELP");
    equal(helped, 2, committed.join("\n"));
    equal(provider.requests.length, 2, "the template named Help sends nothing");
  } finally {
    await close();
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
