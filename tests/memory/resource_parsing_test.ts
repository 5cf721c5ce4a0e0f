import { deepEqual, equal, match, ok, throws } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills, MAX_SKILLS } from "../../src/memory/skills.ts";
import { discoverTemplates, renderTemplate, usage } from "../../src/memory/templates.ts";
import { loadResources } from "../../src/memory/resources.ts";
import { frontmatterParses, MAX_FRONTMATTER_CHARS } from "../../src/memory/frontmatter.ts";
import { READ_ALL } from "../support/read_all.ts";

async function withTree(body: (t: { home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-resource-parse-" }));
  const home = join(root, "home");
  const ws = join(root, "ws");
  await Deno.mkdir(join(home, "prompts"), { recursive: true });
  await Deno.mkdir(join(ws, ".tern", "prompts"), { recursive: true });
  try {
    await body({ home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function writeIn(dir: string, path: string, text: string): string {
  const file = join(dir, path);
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, text);
  return file;
}

/** Frontmatter only the `yaml` package reads (a flow mapping), `n` as a two-digit tag. */
function flowTemplate(n: number): string {
  return `---\ndescription: "template ${String(n).padStart(2, "0")}"\nmeta: {a: 1}\n---\nbody\n`;
}

Deno.test("discoverTemplates() and discoverSkills() parse an unchanged file once per process, and a file changed in place again", async () => {
  await withTree(async ({ home, ws }) => {
    const files = Array.from(
      { length: 5 },
      (_, i) => writeIn(ws, `.tern/prompts/t${i}.md`, flowTemplate(i)),
    );
    writeIn(ws, ".tern/skills/one/SKILL.md", "---\nname: one\ndescription: 'quoted: yes'\n---\n");
    const before = frontmatterParses.count;
    const first = await discoverTemplates(ws, home, READ_ALL);
    await discoverSkills(ws, home, READ_ALL);
    equal(first.templates.length, 5);
    equal(frontmatterParses.count - before, 6);
    const second = await discoverTemplates(ws, home, READ_ALL);
    await discoverSkills(ws, home, READ_ALL);
    equal(frontmatterParses.count - before, 6, "nothing unchanged is parsed again");
    deepEqual(
      second.templates.map((t) => t.description),
      first.templates.map((t) => t.description),
    );
    // Same size, another text: read again whatever its time stamp says.
    const stat = Deno.statSync(files[2]);
    Deno.writeTextFileSync(files[2], flowTemplate(2).replace("template 02", "template 99"));
    Deno.utimeSync(files[2], stat.atime!, stat.mtime!);
    equal(Deno.statSync(files[2]).size, stat.size);
    const third = await discoverTemplates(ws, home, READ_ALL);
    equal(frontmatterParses.count - before, 7);
    equal(third.templates.find((t) => t.name === "t2")?.description, "template 99");
  });
});

Deno.test("discoverTemplates() and discoverSkills() skip a frontmatter block over the size limit with a warning naming the file, unparsed", async () => {
  await withTree(async ({ home, ws }) => {
    const long = `---\ndescription: x\nmeta: [${
      "1,".repeat(MAX_FRONTMATTER_CHARS / 2)
    }1]\n---\nbody\n`;
    const template = writeIn(ws, ".tern/prompts/huge.md", long);
    writeIn(ws, ".tern/prompts/fine.md", "---\ndescription: fine\n---\nbody\n");
    // A skill's head is read up to 16 KB: a block that fills it is refused as never closed.
    const skill = writeIn(ws, ".tern/skills/huge/SKILL.md", long);
    const before = frontmatterParses.count;
    const templates = await discoverTemplates(ws, home, READ_ALL);
    const skills = await discoverSkills(ws, home, READ_ALL);
    equal(frontmatterParses.count, before, "the long blocks are never parsed");
    deepEqual(templates.templates.map((t) => t.name), ["fine"]);
    match(
      templates.diagnostics.join("\n"),
      new RegExp(`"${template.replaceAll(".", "\\.")}" at line 1: the block is longer than 16,384`),
    );
    equal(skills.skills.length, 0);
    ok(skills.diagnostics.some((line) => line.includes(skill)), skills.diagnostics.join("\n"));
  });
});

Deno.test("discoverSkills() reads no more than MAX_SKILLS SKILL.md files of the project", async () => {
  await withTree(async ({ home, ws }) => {
    // Past the cap, files are not even read: an invalid one there gives no frontmatter error.
    for (let i = 0; i < MAX_SKILLS; i++) {
      const name = `s${String(i).padStart(3, "0")}`;
      writeIn(ws, `.tern/skills/${name}/SKILL.md`, `---\nname: ${name}\ndescription: d\n---\n`);
    }
    writeIn(ws, ".tern/skills/zzz/SKILL.md", "---\nname: zzz\ndescription: [unclosed\n---\n");
    const { skills, diagnostics } = await discoverSkills(ws, home, READ_ALL);
    equal(skills.length, MAX_SKILLS);
    deepEqual(diagnostics, [
      `Skill "${join(ws, ".tern/skills/zzz/SKILL.md")}" is not used: there are more than ` +
      `${MAX_SKILLS} in the project`,
    ]);
  });
});

Deno.test("discoverTemplates() skips a template whose argument names are not plain words, naming the file", async () => {
  await withTree(async ({ home, ws }) => {
    writeIn(
      ws,
      ".tern/prompts/evil.md",
      '---\nargs:\n  - name: "x\\e]0;PWNED\\a\\e[2J\\nIgnore"\n---\n{{x}}\n',
    );
    writeIn(ws, ".tern/prompts/evil2.md", '---\nargs: ["a b"]\n---\n$1\n');
    writeIn(
      ws,
      ".tern/prompts/good.md",
      "---\nargs: [file, {name: focus-area, default: x}]\n---\n{{file}}\n",
    );
    const { templates, diagnostics } = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(templates.map((t) => t.name), ["good"]);
    const text = diagnostics.join("\n");
    match(text, /evil\.md" at line 2: `args` has a name that is not a plain word/);
    match(text, /evil2\.md" at line 2: `args` has a name that is not a plain word .*"a b"/);
    ok(!text.includes("\u001b"), "the name is shown escaped");
    throws(() => renderTemplate(templates[0], ""), /Missing argument "file" for \/good/);
    const shown = usage({ ...templates[0], args: [{ name: "a", default: "x\u001b[2J\ny" }] });
    equal(shown, "[a=x [2J y]");
  });
});

Deno.test("loadResources() with personal false keeps a project's skill that one of the person's would shadow", async () => {
  await withTree(async ({ home, ws }) => {
    writeIn(home, "skills/deploy/SKILL.md", "---\nname: deploy\ndescription: USER\n---\n");
    writeIn(ws, ".tern/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: PROJECT\n---\n");
    const mine = await loadResources(ws, home, READ_ALL);
    deepEqual(mine.skills.map((s) => [s.description, s.level]), [["USER", "user"]]);
    const theirs = await loadResources(ws, home, READ_ALL, { personal: false });
    deepEqual(theirs.skills.map((s) => [s.description, s.level]), [["PROJECT", "project"]]);
  });
});
