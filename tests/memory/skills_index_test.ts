/** The skills index in the system prompt: its size cap, and that a skill left out still loads. */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  discoverSkills,
  MAX_SKILL_INDEX_CHARS,
  MAX_SKILLS,
  skillsPromptSection,
} from "../../src/memory/skills.ts";
import { createSkillTool } from "../../src/harness/skill_tool.ts";
import { READ_ALL } from "../support/read_all.ts";

async function withWorkspace(body: (t: { home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-skills-index-" }));
  const home = join(root, "home");
  const ws = join(root, "ws");
  Deno.mkdirSync(home);
  Deno.mkdirSync(ws);
  try {
    await body({ home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("skillsPromptSection() lists skills in order up to its character budget, then counts the rest in one line", async () => {
  await withWorkspace(async ({ home, ws }) => {
    for (let i = 0; i < MAX_SKILLS; i++) {
      const name = `skill-${String(i).padStart(3, "0")}`;
      const dir = join(ws, ".agents", "skills", name);
      Deno.mkdirSync(dir, { recursive: true });
      Deno.writeTextFileSync(
        join(dir, "SKILL.md"),
        `---\nname: ${name}\ndescription: ${"Does a thing. ".repeat(73)}\n---\nBODY of ${name}\n`,
      );
    }
    const { skills, diagnostics } = await discoverSkills(ws, home, READ_ALL);
    deepEqual(diagnostics, []);
    equal(skills.length, MAX_SKILLS);
    const section = skillsPromptSection(skills)!;
    const lines = section.split("\n");
    const listed = lines.filter((line) => line.startsWith("- "));
    ok(listed.length > 0 && listed.length < skills.length, `${listed.length} listed`);
    deepEqual(
      listed.map((line) => line.slice(2, line.indexOf(":"))),
      skills.slice(0, listed.length).map((skill) => skill.name),
      "the first skills, in their order",
    );
    ok(
      listed.join("\n").length <= MAX_SKILL_INDEX_CHARS,
      `${listed.join("\n").length} characters of entries`,
    );
    ok(section.length < MAX_SKILL_INDEX_CHARS + 1_000, `${section.length} characters in all`);
    match(
      lines.at(-1)!,
      new RegExp(`^\\[${skills.length - listed.length} more skills are not listed: .*skill tool`),
    );

    // A skill left out of the index still loads by name.
    const last = skills.at(-1)!;
    ok(!section.includes(last.name));
    const tool = createSkillTool(() => skills);
    const result = await tool.run({ name: last.name }, {
      workspace: ws,
      signal: new AbortController().signal,
    });
    equal(result.status, "SUCCEEDED");
    match((result as { output: string }).output, new RegExp(`BODY of ${last.name}`));
  });
});

Deno.test("skillsPromptSection() lists every skill, with no note, when they fit", () => {
  const skills = ["a", "b"].map((name) => ({
    name,
    description: `does ${name}`,
    path: `/ws/.tern/skills/${name}/SKILL.md`,
    dir: `/ws/.tern/skills/${name}`,
    realDir: `/ws/.tern/skills/${name}`,
    realPath: `/ws/.tern/skills/${name}/SKILL.md`,
    root: "/ws",
    level: "project" as const,
  }));
  const lines = skillsPromptSection(skills)!.split("\n");
  equal(lines.length, 3);
  match(lines[1], /^- a: does a /);
  match(lines[2], /^- b: does b /);
});

Deno.test("a repository's many skills crowd neither the person's skill out of discovery nor out of the index", async () => {
  await withWorkspace(async ({ home, ws }) => {
    for (let i = 0; i <= MAX_SKILLS; i++) {
      const dir = join(ws, ".agents", "skills", `repo-${String(i).padStart(3, "0")}`);
      Deno.mkdirSync(dir, { recursive: true });
      Deno.writeTextFileSync(
        join(dir, "SKILL.md"),
        `---\ndescription: ${"Repository words. ".repeat(50)}\n---\nrepo\n`,
      );
    }
    const own = join(home, "skills", "mine");
    Deno.mkdirSync(own, { recursive: true });
    Deno.writeTextFileSync(join(own, "SKILL.md"), "---\ndescription: my own\n---\nMINE\n");
    const { skills, diagnostics } = await discoverSkills(ws, home, READ_ALL);
    ok(skills.some((skill) => skill.name === "mine"), "the person's skill is found");
    equal(skills.filter((skill) => skill.level === "project").length, MAX_SKILLS);
    ok(diagnostics.some((line) => line.includes("more than 200 in the project")), diagnostics[0]);
    const listed = skillsPromptSection(skills)!.split("\n").filter((line) => line.startsWith("- "));
    equal(listed[0].slice(2, listed[0].indexOf(":")), "mine", "listed first");
  });
});
