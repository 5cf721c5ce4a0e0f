/**
 * A hostile repository's files built to crash the parsers tern reads them with: a config file
 * nested thousands deep, a skill whose YAML expands aliases into a billion values. The real
 * `tern` names the file; a bad config stops it with exit 2, a bad skill is skipped.
 */
import { doesNotMatch, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, scriptedRunArgs, tempWorkspace } from "../support/tern_process.ts";

const ALIAS_BOMB = [
  "a: &a [x,x,x,x,x,x,x,x,x,x]",
  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]",
].join("\n");

function writeIn(dir: string, path: string, text: string): string {
  const file = join(dir, path);
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, text);
  return file;
}

Deno.test("tern refuses a project config nested 5,000 deep with exit 2, naming the file", async () => {
  const ws = await tempWorkspace();
  try {
    const depth = 5_000;
    const file = writeIn(
      ws.dir,
      ".tern/config.jsonc",
      `{"models":${"[".repeat(depth)}${"]".repeat(depth)}}`,
    );
    const run = await runTern(["context"], {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 2, run.stderr);
    match(run.stderr, new RegExp(`Invalid config file "${file}": line 1, column 74: `));
    match(run.stderr, /nested more than 64 levels deep/);
    doesNotMatch(run.stderr, /internal error|RangeError|jsonc-parser/);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern run skips a .claude skill whose frontmatter is an alias bomb, says which, and runs", async () => {
  const ws = await tempWorkspace();
  const server = await startScriptedServer([{ text: "done" }], { chunkDelayMs: 0 });
  try {
    const file = writeIn(
      ws.dir,
      ".claude/skills/s/SKILL.md",
      `---\nname: bomb\ndescription: x\n${ALIAS_BOMB}\n---\nbody\n`,
    );
    const run = await runTern(scriptedRunArgs(server.baseUrl, "hi"), {
      cwd: ws.dir,
      env: { HOME: ws.home, TERN_HOME: ws.home },
    });
    equal(run.code, 0, run.stderr);
    match(run.stderr, new RegExp(`Cannot read the frontmatter of "${file}" at line 2: .*alias`));
    doesNotMatch(run.stderr, /internal error/);
    equal(server.requests.length, 1);
  } finally {
    await server.close();
    await ws.cleanup();
  }
});
