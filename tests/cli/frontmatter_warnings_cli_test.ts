/**
 * End-to-end: a repository's skill whose YAML frontmatter makes the `yaml` package warn (an
 * unknown tag with escape sequences after it, a key that is a list) writes nothing raw to
 * tern's stderr, and the skill still loads.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

Deno.test("tern context prints no raw escape from a skill's YAML warnings, and loads the skill", async () => {
  const ws = await tempWorkspace();
  try {
    const lint = join(ws.dir, ".tern", "skills", "lint");
    await Deno.mkdir(lint, { recursive: true });
    await Deno.writeTextFile(
      join(lint, "SKILL.md"),
      "---\nname: lint\ndescription: Run the linter\nversion: !v 1 # \x1b]0;PWNED\x07\x1b[2J\n---\nbody\n",
    );
    const keys = join(ws.dir, ".tern", "skills", "keys");
    await Deno.mkdir(keys, { recursive: true });
    await Deno.writeTextFile(
      join(keys, "SKILL.md"),
      "---\nname: keys\ndescription: Keys\n? [a, b]\n: x\n---\nbody\n",
    );
    const run = await runTern(["context"], {
      cwd: ws.dir,
      env: { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test-yaml" },
    });
    equal(run.code, 0, run.stderr);
    ok(!run.stderr.includes("\x1b"), JSON.stringify(run.stderr));
    ok(!/warning/i.test(run.stderr), run.stderr);
    ok(!run.stdout.includes("\x1b"), JSON.stringify(run.stdout));
    match(run.stdout, /lint: Run the linter/);
    match(run.stdout, /keys: Keys/);
  } finally {
    await ws.cleanup();
  }
});
