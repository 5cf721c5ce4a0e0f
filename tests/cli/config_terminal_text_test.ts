import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, tempWorkspace } from "../support/tern_process.ts";

/** A project model name that would set the window title if printed raw. */
const HOSTILE_MODEL = `{ "model": "gpt-x\\u001b]0;PWNED-TITLE\\u0007\\u009b2J" }`;

/** Project rules whose words would set the window title if printed raw. */
const HOSTILE = `{
  "rules": [
    { "action": "ask", "command": "git push", "reason": "push\\u001b]52;c;eA==\\u0007\\u202e" },
    { "action": "deny", "path": "secret\\u001b]0;PATHRULE\\u0007/**" }
  ]
}`;

/** Whether `text` holds anything a terminal would obey (newlines and tabs aside). */
// deno-lint-ignore no-control-regex
const obeyed = (text: string) => /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/.test(text);

async function withHostileProject(
  fn: (cwd: string, env: Record<string, string>) => Promise<void>,
  config = HOSTILE,
) {
  const ws = await tempWorkspace();
  try {
    await new Deno.Command("git", { args: ["init", "-q"], cwd: ws.dir }).output();
    await Deno.mkdir(join(ws.dir, ".tern"));
    await Deno.writeTextFile(join(ws.dir, ".tern", "config.jsonc"), config);
    await fn(ws.dir, { TERN_HOME: ws.home, HOME: ws.home });
  } finally {
    await ws.cleanup();
  }
}

Deno.test("tern config refuses a project's model name with escape sequences, naming it without them", async () => {
  await withHostileProject(async (cwd, env) => {
    const out = await runTern(["config"], { cwd, env });
    equal(out.code, 2, out.stdout + out.stderr);
    match(out.stderr, /"model"/);
    ok(out.stderr.includes("gpt-x"), out.stderr);
    ok(!obeyed(out.stderr) && !obeyed(out.stdout), JSON.stringify(out.stderr));
  }, HOSTILE_MODEL);
});

Deno.test("tern config prints a project's rules without escape sequences", async () => {
  await withHostileProject(async (cwd, env) => {
    const out = await runTern(["config"], { cwd, env });
    equal(out.code, 0, out.stderr);
    ok(out.stdout.includes("push"), out.stdout + out.stderr);
    ok(!obeyed(out.stdout), JSON.stringify(out.stdout));
  });
});

Deno.test("tern sandbox check prints a rule's reason without escape sequences", async () => {
  await withHostileProject(async (cwd, env) => {
    const text = await runTern(["sandbox", "check", "--", "git push"], { cwd, env });
    ok(text.stdout.includes("push"), text.stdout + text.stderr);
    ok(!obeyed(text.stdout), JSON.stringify(text.stdout));
    const json = await runTern(["sandbox", "check", "-o", "json", "--", "git push"], { cwd, env });
    // The ask rule's words are its note, never tern's reason.
    const verdict = JSON.parse(json.stdout);
    ok(verdict.note.text.includes("push\x1b]52"), json.stdout);
    match(verdict.note.from, /the ask rule ask command "git push" in .*config\.jsonc/);
    ok(!verdict.reason.includes("\x1b"), json.stdout);
    ok(!obeyed(json.stdout), JSON.stringify(json.stdout));
  });
});
