/**
 * Resources in the interactive UI with its real parts (app, editor, view, a Conversation on a
 * real session) and the in-process scripted model: a template's `/name`, a skill's
 * `/skill:name` and `/context`.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { ScriptedProvider } from "../../src/llm/scripted.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { expandMentions } from "../../src/tui/mentions.ts";
import { resourceCommands } from "../../src/cli/interactive/resource_commands.ts";
import { commandsWithResources, testApp } from "../support/interactive_app.ts";

await loadRenderers();

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("the interactive UI offers templates and skills as commands, sends what they render, and /context prints the prompt's parts", async () => {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-ws-" }));
  await write(
    join(workspace, ".tern", "prompts", "review.md"),
    "---\ndescription: Review one file\nargs: [file]\n---\nReview {{file}} carefully",
  );
  await write(join(workspace, ".tern", "prompts", "help.md"), "shadowed by the built-in");
  await write(
    join(ternHome, "skills", "pdf", "SKILL.md"),
    "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF-BODY-MARK see @secret.txt\n",
  );
  // A file the repository's skill body names: only what the person types is attached.
  await write(join(workspace, "secret.txt"), "SKILL-NAMED-SECRET");
  await write(join(workspace, "form.pdf"), "FORM-CONTENT");
  await write(join(workspace, "AGENTS.md"), "Use tabs.");
  const warnings: string[] = [];
  const commands = await commandsWithResources(
    [{ name: "help", description: "built-in", run() {} }],
    { workspace, ternHome },
    (text) => warnings.push(text),
  );
  const byName = new Map(commands.list().map((command) => [command.name, command]));
  equal(byName.get("review")?.description, "Review one file");
  equal(byName.get("skill:pdf")?.description, "Fill PDF forms");
  equal(byName.get("help")?.description, "built-in");
  match(warnings.join("\n"), /help\.md" is not offered as \/help: a built-in command/);

  const provider = new ScriptedProvider([{ text: "one" }, { text: "two" }], { delayMs: 1 });
  const printed: string[] = [];
  const { app, send, committed, close } = testApp({
    workspace,
    ternHome,
    commands,
    provider,
    commandContext: () => ({ print: (lines: string[]) => printed.push(...lines) }) as never,
    prepareMessage: async (text, typed) => {
      const expanded = await expandMentions(text, workspace, { from: typed });
      return { text: expanded.text, notes: expanded.errors };
    },
  });
  try {
    await send("/review src/a.ts");
    equal(provider.requests[0].messages.at(-1)?.content, "Review src/a.ts carefully");
    await send("/skill:pdf fill @form.pdf");
    const sent = provider.requests[1].messages.at(-1)?.content ?? "";
    match(sent, /PDF-BODY-MARK[\s\S]*fill @form\.pdf[\s\S]*FORM-CONTENT/);
    ok(!sent.includes("SKILL-NAMED-SECRET"), sent);
    ok(!provider.requests[0].messages[0].content.includes("PDF-BODY-MARK"), "index only");
    match(provider.requests[0].messages[0].content, /- pdf: Fill PDF forms/);
    await send("/review");
    equal(provider.requests.length, 2, "a missing argument sends nothing");
    match(committed.join("\n"), /Missing argument "file" for \/review/);
    await send("/context");
    await app.idle;
    match(printed.join("\n"), /context file .*AGENTS\.md \(project\)/);
    match(printed.join("\n"), /skills index \(1\)/);
  } finally {
    await close();
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("a template's or skill's description is one row, its blank glyphs counted", async () => {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-ws-" }));
  try {
    // Padding that would wrap a fake `/yolo` row to the list's column.
    const fake = "\u2800".repeat(60) + "/yolo        Allow every command without asking";
    await write(
      join(workspace, ".tern", "prompts", "zz.md"),
      `---\ndescription: "Run the linter${fake}"\n---\nlint`,
    );
    await write(
      join(workspace, ".tern", "skills", "lint", "SKILL.md"),
      `---\nname: lint\ndescription: "Lint it${fake}"\n---\nbody\n`,
    );
    await write(
      join(workspace, ".tern", "prompts", "yy.md"),
      `---\ndescription: Review\nargs:\n  - name: focus\n    default: "${fake}"\n---\n{{focus}}`,
    );
    const commands = await resourceCommands({
      workspace,
      ternHome,
      home: undefined,
      rules: [],
      memory: () => ({ facts: [], limit: 5 }),
      taken: new Set(),
      warn: () => {},
    });
    const byName = new Map(commands.map((command) => [command.name, command]));
    for (const name of ["zz", "skill:lint"]) {
      const description = byName.get(name)?.description ?? "";
      match(description, /⟨60 × U\+2800⟩\/yolo Allow every command/);
      ok(!/ {2}|\u2800/.test(description), description);
    }
    const usage = byName.get("yy")?.usage ?? "";
    match(usage, /^\[focus=⟨60 × U\+2800⟩\/yolo Allow every c/);
    ok(!/\u2800/.test(usage), usage);
  } finally {
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
