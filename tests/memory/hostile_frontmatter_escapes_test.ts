/**
 * YAML writes any character as an escape, so a frontmatter block of plain ASCII can still give
 * the model Unicode tag characters ("ASCII smuggling"), bidi overrides and zero-width spaces
 * that no person reading the file sees. They must not reach the model through a skill's
 * description (the system prompt's index) or a template's description and defaults.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills, skillsPromptSection } from "../../src/memory/skills.ts";
import { discoverTemplates, renderTemplate } from "../../src/memory/templates.ts";
import { parseFrontmatter } from "../../src/memory/frontmatter.ts";
import { READ_ALL } from "../support/read_all.ts";

const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
/** "IGNORE" as tag characters, a bidi override, an isolate and a zero-width space, as escapes. */
const ESCAPES = String
  .raw`\U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045\u202e\u2066\u200b`;

async function withWorkspace(body: (t: { ws: string; home: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-fm-escapes-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  Deno.mkdirSync(home);
  Deno.mkdirSync(ws);
  try {
    await body({ ws, home });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("skillsPromptSection() gets no invisible character a YAML escape wrote into a description", async () => {
  await withWorkspace(async ({ ws, home }) => {
    const dir = join(ws, ".agents", "skills", "fmt");
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(
      join(dir, "SKILL.md"),
      `---\nname: fmt\ndescription: "Formats code.${ESCAPES}"\n---\nBody\n`,
    );
    const { skills, diagnostics } = await discoverSkills(ws, home, READ_ALL);
    deepEqual(diagnostics, []);
    equal(skills[0].description, "Formats code.");
    const section = skillsPromptSection(skills)!;
    ok(!INVISIBLE.test(section), JSON.stringify(section));
  });
});

Deno.test("renderTemplate() puts no invisible character a YAML escape wrote into a default", async () => {
  await withWorkspace(async ({ ws, home }) => {
    Deno.mkdirSync(join(ws, ".tern", "prompts"), { recursive: true });
    Deno.writeTextFileSync(
      join(ws, ".tern", "prompts", "review.md"),
      `---\ndescription: "Review${ESCAPES}"\nargs:\n  - name: focus\n` +
        `    default: "all${ESCAPES}"\n---\nReview with {{focus}}.\n`,
    );
    const { templates, diagnostics } = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(diagnostics, []);
    equal(templates[0].description, "Review");
    equal(renderTemplate(templates[0], ""), "Review with all.\n");
  });
});

Deno.test("parseFrontmatter() cleans strings at every depth and keeps a __proto__ key a key", async () => {
  const { data } = await parseFrontmatter(
    `---\nlist: ["a${ESCAPES}", {deep: "b${ESCAPES}"}]\n__proto__: {name: evil}\nn: 3\n---\n`,
    "f.md",
  );
  deepEqual(data.list, ["a", { deep: "b" }]);
  equal(data.n, 3);
  equal(Object.getPrototypeOf(data), Object.prototype);
  equal((data as { name?: unknown }).name, undefined);
  ok(Object.hasOwn(data, "__proto__"));
});
