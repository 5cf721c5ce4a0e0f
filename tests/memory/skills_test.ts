import { deepEqual, equal, match, ok, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  discoverSkills,
  MAX_SKILL_DEPTH,
  readSkillBody,
  readSkillFile,
  skillsPromptSection,
} from "../../src/memory/skills.ts";
import { parseFrontmatter } from "../../src/memory/frontmatter.ts";
import { READ_ALL } from "../support/read_all.ts";

async function withTree(body: (t: { root: string; home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-skills-" }));
  const home = join(root, "home");
  const ws = join(root, "ws");
  await Deno.mkdir(home);
  await Deno.mkdir(ws);
  try {
    await body({ root, home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function skill(dir: string, name: string, description: string, body = "BODY of " + name) {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "SKILL.md"),
    `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`,
  );
}

Deno.test("discoverSkills() finds skills in every folder, user over project, .tern over .agents over .claude, with a note for each duplicate", async () => {
  await withTree(async ({ home, ws }) => {
    await skill(join(home, "skills", "deploy"), "deploy", "USER deploy");
    await skill(join(home, "skills", "group", "lint"), "lint", "USER lint");
    await skill(join(ws, ".claude", "skills", "deploy"), "deploy", "CLAUDE deploy");
    await skill(join(ws, ".agents", "skills", "deploy"), "deploy", "AGENTS deploy");
    await skill(join(ws, ".agents", "skills", "review"), "review", "AGENTS review");
    await skill(join(ws, ".tern", "skills", "review"), "review", "TERN review");
    const index = await discoverSkills(ws, home, READ_ALL);
    deepEqual(
      index.skills.map((s) => [s.name, s.description, s.level]).sort(),
      [
        ["deploy", "USER deploy", "user"],
        ["lint", "USER lint", "user"],
        ["review", "TERN review", "project"],
      ],
    );
    equal(index.diagnostics.length, 3);
    for (const line of index.diagnostics) match(line, /is not used: ".*" has the same name/);
    match(
      index.diagnostics.join("\n"),
      /"deploy" in ".*\.agents\/skills\/deploy\/SKILL\.md" is not used: ".*home\/skills\/deploy\/SKILL\.md"/,
    );
  });
});

Deno.test("discoverSkills() names the file and line of malformed frontmatter and skips the skill", async () => {
  await withTree(async ({ home, ws }) => {
    const dir = join(ws, ".tern", "skills", "broken");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      join(dir, "SKILL.md"),
      "---\nname: broken\ndescription: [unclosed\nmore: x\n---\nbody\n",
    );
    await Deno.mkdir(join(ws, ".tern", "skills", "open"));
    await Deno.writeTextFile(join(ws, ".tern", "skills", "open", "SKILL.md"), "---\nname: open\n");
    await skill(join(ws, ".tern", "skills", "nodesc"), "nodesc", "");
    await skill(join(ws, ".tern", "skills", "good"), "good", "fine");
    const index = await discoverSkills(ws, home, READ_ALL);
    deepEqual(index.skills.map((s) => s.name), ["good"]);
    const text = index.diagnostics.join("\n");
    match(text, /Cannot read the frontmatter of ".*broken\/SKILL\.md" at line [34]:/);
    match(text, /".*open\/SKILL\.md" at line 1: the `---` block is never closed/);
    match(text, /nodesc\/SKILL\.md" is not used: its frontmatter has no description/);
  });
});

Deno.test("discoverSkills() refuses a SKILL.md that is a symlink out of its root and follows no symlinked folder", async () => {
  await withTree(async ({ root, home, ws }) => {
    await skill(join(root, "outside", "stolen"), "stolen", "SECRET description");
    await Deno.mkdir(join(ws, ".tern", "skills", "link"), { recursive: true });
    Deno.symlinkSync(
      join(root, "outside", "stolen", "SKILL.md"),
      join(ws, ".tern", "skills", "link", "SKILL.md"),
    );
    Deno.symlinkSync(join(root, "outside"), join(ws, ".tern", "skills", "dir-link"));
    const index = await discoverSkills(ws, home, READ_ALL);
    deepEqual(index.skills, []);
    equal(index.diagnostics.length, 1);
    match(
      index.diagnostics[0],
      /Skipping skill ".*link\/SKILL\.md": it leads out of the workspace/,
    );
  });
});

Deno.test("discoverSkills() looks no deeper than its depth limit", async () => {
  await withTree(async ({ home, ws }) => {
    let deep = join(ws, ".tern", "skills");
    for (let i = 0; i < MAX_SKILL_DEPTH; i++) deep = join(deep, `d${i}`);
    await skill(deep, "deep-ok", "found");
    await skill(join(deep, "d-too-deep"), "too-deep", "never found");
    deepEqual((await discoverSkills(ws, home, READ_ALL)).skills.map((s) => s.name), ["deep-ok"]);
  });
});

Deno.test("a skill is indexed by name and description only; its body and files are read on activation, confined to its folder", async () => {
  await withTree(async ({ root, home, ws }) => {
    const dir = join(home, "skills", "pdf");
    await skill(dir, "pdf", "Fill PDF forms", "Run scripts/fill.py. BODY-MARK");
    await Deno.mkdir(join(dir, "scripts"));
    await Deno.writeTextFile(join(dir, "scripts", "fill.py"), "print('fill')\n");
    await Deno.writeTextFile(join(root, "secret.txt"), "SECRET");
    Deno.symlinkSync(join(root, "secret.txt"), join(dir, "notes.md"));
    const [pdf] = (await discoverSkills(ws, home, READ_ALL)).skills;
    const section = skillsPromptSection([pdf])!;
    match(section, /- pdf: Fill PDF forms \(.*skills\/pdf\/SKILL\.md\)/);
    ok(!section.includes("BODY-MARK"), "the index carries no body");
    equal((await readSkillBody(pdf)).trim(), "Run scripts/fill.py. BODY-MARK");
    equal(readSkillFile(pdf, "scripts/fill.py"), "print('fill')\n");
    throws(() => readSkillFile(pdf, "../../secret.txt"), /outside its folder/);
    throws(() => readSkillFile(pdf, "notes.md"), /leads out of the workspace/);
    await Deno.writeTextFile(join(dir, "SKILL.md"), "---\nname: [\n---\n");
    await rejects(readSkillBody(pdf), /Cannot read the frontmatter of/);
  });
});

Deno.test("parseFrontmatter() gives the data and the body, and no block means no data", async () => {
  deepEqual(
    await parseFrontmatter("---\nname: a\ndescription: >\n  two\n  lines\n---\nbody\n", "f"),
    {
      data: { name: "a", description: "two lines\n" },
      body: "body\n",
    },
  );
  deepEqual(await parseFrontmatter("just text\n", "f"), { data: {}, body: "just text\n" });
  await rejects(
    parseFrontmatter("---\n- a list\n---\n", "f.md"),
    /"f\.md" at line 2: it is not a mapping/,
  );
  await rejects(parseFrontmatter("---\na: 1\na: 2\n---\n", "f.md"), /"f\.md" at line 3/);
});

Deno.test("parseFrontmatter() reads plain key: value blocks as the yaml package does", async () => {
  const { parse } = await import("yaml");
  const blocks = [
    "name: pdf\ndescription: Fill PDF forms, then check them.",
    "name: a\nargs: [file, focus]\n# a comment\n\nlicense: MIT",
    "description: use it when: always",
    "description: 'quoted'",
    "version: 1.0",
    "flag: true",
    "args: [a, {b: 1}]",
    "description: a #comment",
    "description: >\n  folded",
    "key:",
  ];
  for (const block of blocks) {
    const text = `---\n${block}\n---\nbody\n`;
    let expected: unknown;
    try {
      expected = parse(block) ?? {};
    } catch {
      await rejects(parseFrontmatter(text, "f.md"), /Cannot read the frontmatter/, block);
      continue;
    }
    deepEqual((await parseFrontmatter(text, "f.md")).data, expected, block);
  }
});

Deno.test("discoverSkills() and discoverTemplates() do not search a skills or prompts folder that is a symlink out", async () => {
  const { discoverTemplates } = await import("../../src/memory/templates.ts");
  await withTree(async ({ root, home, ws }) => {
    await skill(join(root, "private", "secret-skill"), "secret-skill", "PRIVATE");
    await Deno.writeTextFile(join(root, "private", "notes.md"), "PRIVATE NOTES");
    await Deno.mkdir(join(ws, ".tern"));
    Deno.symlinkSync(join(root, "private"), join(ws, ".tern", "skills"));
    Deno.symlinkSync(join(root, "private"), join(ws, ".tern", "prompts"));
    const skills = await discoverSkills(ws, home, READ_ALL);
    deepEqual(skills.skills, []);
    deepEqual(skills.diagnostics.length, 1);
    match(
      skills.diagnostics[0],
      /Skipping folder ".*\.tern\/skills": it leads out of .* through a symlink/,
    );
    ok(!skills.diagnostics[0].includes("secret-skill"), "nothing under it is listed");
    const templates = await discoverTemplates(ws, home, READ_ALL);
    deepEqual(templates.templates, []);
    match(templates.diagnostics.join("\n"), /Skipping folder ".*\.tern\/prompts"/);
    ok(!templates.diagnostics.join("\n").includes("notes.md"));
  });
});
