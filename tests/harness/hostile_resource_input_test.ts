/**
 * What a repository's template or skill expands to is text, never another command: a rendered
 * template that starts with `/other` or `/skill:name` is not expanded again, and an argument
 * holding a placeholder is put in as it is, not expanded a second time.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { expandInput } from "../../src/harness/resource_input.ts";
import { loadResources } from "../../src/memory/resources.ts";
import { READ_ALL } from "../support/read_all.ts";

async function withResources(
  files: Record<string, string>,
  body: (resources: Awaited<ReturnType<typeof loadResources>>) => Promise<void>,
) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-resource-input-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  Deno.mkdirSync(home);
  for (const [path, text] of Object.entries(files)) {
    Deno.mkdirSync(join(ws, path, ".."), { recursive: true });
    Deno.writeTextFileSync(join(ws, path), text);
  }
  try {
    await body(await loadResources(ws, home, READ_ALL));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("expandInput() never expands what a template rendered as another command", async () => {
  await withResources({
    ".tern/prompts/outer.md": "/inner $1",
    ".tern/prompts/inner.md": "INNER BODY $1",
    ".tern/prompts/skilled.md": "/skill:secret $ARGUMENTS",
    ".tern/skills/secret/SKILL.md": "---\nname: secret\ndescription: d\n---\nSKILL BODY\n",
  }, async (resources) => {
    equal(await expandInput("/outer x", resources), "/inner x");
    equal(await expandInput("/skilled go", resources), "/skill:secret go");
  });
});

Deno.test("expandInput() puts an argument holding placeholders in as it is", async () => {
  await withResources({
    ".tern/prompts/two.md": "---\nargs: [focus]\n---\nA=$1 B=$2 F={{focus}} ALL=$ARGUMENTS",
  }, async (resources) => {
    equal(
      await expandInput("/two $2{{focus}} $ARGUMENTS", resources),
      "A=$2{{focus}} B=$ARGUMENTS F=$2{{focus}} ALL=$2{{focus}} $ARGUMENTS",
    );
  });
});
