/**
 * A skill's files are read at activation, after the model may have run commands in the same turn:
 * swapping the skill's folder, or its `SKILL.md`, for a symlink once the skill was found must not
 * let the `skill` tool read elsewhere. Real files and real symlinks.
 */
import { equal, rejects, throws } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills, readSkillBody, readSkillFile } from "../../src/memory/skills.ts";
import { READ_ALL } from "../support/read_all.ts";

async function withTree(body: (t: { root: string; home: string; ws: string }) => Promise<void>) {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-skill-swap-" }));
  const home = join(root, "home");
  const ws = join(home, "project");
  await Deno.mkdir(ws, { recursive: true });
  try {
    await body({ root, home, ws });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function writeSkill(dir: string, name: string, body: string): void {
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    join(dir, "SKILL.md"),
    `---\nname: ${name}\ndescription: d\n---\n${body}\n`,
  );
}

async function foundSkill(ws: string, ternHome: string) {
  const { skills, diagnostics } = await discoverSkills(ws, ternHome, READ_ALL);
  equal(diagnostics.length, 0, diagnostics.join("\n"));
  equal(skills.length, 1);
  return skills[0];
}

Deno.test("readSkillFile() refuses a skill whose folder became a symlink to the home folder after it was found", async () => {
  await withTree(async ({ root, home, ws }) => {
    const dir = join(ws, ".agents", "skills", "foo");
    writeSkill(dir, "foo", "BODY");
    Deno.mkdirSync(join(home, "other-project"));
    Deno.writeTextFileSync(join(home, "other-project", ".env"), "TOKEN=HOME-SECRET");
    const foo = await foundSkill(ws, join(root, "tern-home"));
    // What the model's bash command does in the same turn: rm -rf foo && ln -s $HOME foo.
    Deno.removeSync(dir, { recursive: true });
    Deno.symlinkSync(home, dir);
    throws(
      () => readSkillFile(foo, "other-project/.env"),
      /Cannot read "other-project\/\.env" of skill "foo": its folder ".*foo" changed since the skill was found/,
    );
    await rejects(readSkillBody(foo), /its folder ".*foo" changed since the skill was found/);
  });
});

Deno.test("readSkillFile() and readSkillBody() refuse a skill whose folder became a symlink to another folder of the workspace", async () => {
  await withTree(async ({ root, ws }) => {
    const dir = join(ws, ".agents", "skills", "foo");
    writeSkill(dir, "foo", "BODY");
    writeSkill(join(ws, "elsewhere"), "foo", "OTHER BODY");
    Deno.writeTextFileSync(join(ws, "elsewhere", "notes.md"), "OTHER NOTES");
    const foo = await foundSkill(ws, join(root, "tern-home"));
    Deno.removeSync(dir, { recursive: true });
    Deno.symlinkSync(join("..", "..", "elsewhere"), dir);
    throws(() => readSkillFile(foo, "notes.md"), /changed since the skill was found/);
    await rejects(readSkillBody(foo), /changed since the skill was found/);
  });
});

Deno.test("readSkillBody() refuses a SKILL.md swapped for a symlink after the skill was found", async () => {
  await withTree(async ({ root, ws }) => {
    const dir = join(ws, ".agents", "skills", "foo");
    writeSkill(dir, "foo", "BODY");
    writeSkill(join(ws, "elsewhere"), "foo", "OTHER BODY");
    const foo = await foundSkill(ws, join(root, "tern-home"));
    equal((await readSkillBody(foo)).trim(), "BODY");
    Deno.removeSync(join(dir, "SKILL.md"));
    Deno.symlinkSync(join("..", "..", "..", "elsewhere", "SKILL.md"), join(dir, "SKILL.md"));
    await rejects(
      readSkillBody(foo),
      /Skipping skill ".*foo\/SKILL\.md": it changed since the skill was found \(it now leads to ".*elsewhere\/SKILL\.md"\)/,
    );
  });
});

Deno.test("readSkillFile() refuses a file of the skill that leads out of the skill's folder, even inside the workspace", async () => {
  await withTree(async ({ root, ws }) => {
    const dir = join(ws, ".agents", "skills", "foo");
    writeSkill(dir, "foo", "BODY");
    Deno.writeTextFileSync(join(ws, "private.txt"), "PRIVATE");
    Deno.symlinkSync(join("..", "..", "..", "private.txt"), join(dir, "notes.md"));
    Deno.writeTextFileSync(join(dir, "kept.md"), "KEPT");
    const foo = await foundSkill(ws, join(root, "tern-home"));
    equal(readSkillFile(foo, "kept.md"), "KEPT");
    throws(() => readSkillFile(foo, "notes.md"), /it leads out of the skill's folder/);
  });
});

Deno.test("readSkillBody() and readSkillFile() still read a skill edited in place, or whose folder was made again", async () => {
  await withTree(async ({ root, ws }) => {
    const dir = join(ws, ".agents", "skills", "foo");
    writeSkill(dir, "foo", "BODY");
    const foo = await foundSkill(ws, join(root, "tern-home"));
    Deno.removeSync(dir, { recursive: true });
    writeSkill(dir, "foo", "NEW BODY");
    Deno.writeTextFileSync(join(dir, "notes.md"), "NOTES");
    equal((await readSkillBody(foo)).trim(), "NEW BODY");
    equal(readSkillFile(foo, "notes.md"), "NOTES");
    Deno.removeSync(dir, { recursive: true });
    await rejects(readSkillBody(foo), /"foo".*is gone/);
  });
});
