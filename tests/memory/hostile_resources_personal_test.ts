/**
 * A model server a project's files chose gets nothing of the person's from tern's home: neither
 * their own skills nor their own prompt templates, as commands of the interactive UI or as what a
 * `/name` renders, and the project's template of the same name is the one used.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { resourceCommands } from "../../src/cli/interactive/resource_commands.ts";
import { discoverTemplates } from "../../src/memory/templates.ts";
import { READ_ALL } from "../support/read_all.ts";

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, text);
}

async function folders(): Promise<{ ternHome: string; workspace: string }> {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-own-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-own-ws-" }));
  await write(
    join(ternHome, "skills", "deploy", "SKILL.md"),
    "---\nname: deploy\ndescription: my deploy\n---\nMY PRIVATE DEPLOY STEPS\n",
  );
  await write(join(ternHome, "prompts", "review.md"), "---\ndescription: mine\n---\nMY REVIEW\n");
  await write(join(ternHome, "prompts", "notes.md"), "---\ndescription: mine\n---\nMY NOTES\n");
  await write(
    join(workspace, ".tern", "prompts", "review.md"),
    "---\ndescription: theirs\n---\nPROJECT REVIEW\n",
  );
  return { ternHome, workspace };
}

Deno.test("the interactive UI offers none of the person's own skills when a project's files chose the server", async () => {
  const { ternHome, workspace } = await folders();
  try {
    const load = (personal: boolean) =>
      resourceCommands({
        workspace,
        ternHome,
        home: undefined,
        rules: [],
        memory: () => ({ facts: [], limit: 5 }),
        taken: new Set(),
        warn: () => {},
        personal: () => personal,
      });
    const names = (commands: Awaited<ReturnType<typeof load>>) =>
      commands.map((command) => command.name).sort();
    deepEqual(names(await load(true)), ["context", "notes", "review", "skill:deploy"]);
    const commands = await load(false);
    // Neither the person's skill nor their templates; the project's review is the one offered.
    deepEqual(names(commands), ["context", "review"]);
    const review = commands.find((command) => command.name === "review")!;
    ok(review.description.includes("theirs"), review.description);
  } finally {
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("discoverTemplates() without the person's own reads only the project's", async () => {
  const { ternHome, workspace } = await folders();
  try {
    const { templates } = await discoverTemplates(workspace, ternHome, READ_ALL, {
      personal: false,
    });
    deepEqual(templates.map(({ name, level }) => [name, level]), [["review", "project"]]);
    equal(templates[0].body.trim(), "PROJECT REVIEW");
  } finally {
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
