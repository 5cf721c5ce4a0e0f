/**
 * A repository's thousands of skill folders past the cap are told in one line, not one each: a
 * line per folder (2,770 for three roots of 990) buried every other warning of a start on stderr.
 */
import { equal, match } from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills, MAX_SKILLS } from "../../src/memory/skills.ts";
import { READ_ALL } from "../support/read_all.ts";

Deno.test("the skills of a repository past the cap are one warning, whatever their number", async () => {
  const ternHome = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-flood-home-" }));
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-flood-ws-" }));
  try {
    for (const root of [".tern", ".agents", ".claude"]) {
      for (let i = 0; i < 300; i++) {
        const dir = join(workspace, root, "skills", `s${String(i).padStart(4, "0")}`);
        await Deno.mkdir(dir, { recursive: true });
        await Deno.writeTextFile(join(dir, "SKILL.md"), `---\ndescription: d\n---\nbody\n`);
      }
    }
    const { skills, diagnostics } = await discoverSkills(workspace, ternHome, READ_ALL);
    equal(skills.length, MAX_SKILLS);
    equal(diagnostics.length, 1, diagnostics.slice(0, 3).join("\n"));
    match(
      diagnostics[0],
      /^700 skills, from ".*\/\.tern\/skills\/s0200\/SKILL\.md" on, are not used: there are more than 200 in the project$/,
    );
  } finally {
    await Deno.remove(ternHome, { recursive: true });
    await Deno.remove(workspace, { recursive: true });
  }
});
