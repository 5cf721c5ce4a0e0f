/**
 * On a case-insensitive file system (macOS by default) `GIT push` runs git: a deny or ask rule
 * about a program names it in any case, as the system finds it. Allow rules still match the
 * name exactly (an over-wide allow would skip review), and a subcommand's case is git's to read.
 */
import { equal } from "node:assert/strict";
import { evaluate } from "../../src/sandbox/policy.ts";
import { compileProfile } from "../../src/sandbox/profiles.ts";
import { compileRules } from "../../src/sandbox/rules.ts";
import { classifyShell } from "../../src/sandbox/shell/classify.ts";

const profile = compileProfile(":workspace", { workspace: "/w", tmp: "/t" });

async function actions(rules: Parameters<typeof compileRules>[0], commands: string[]) {
  const compiled = await compileRules(rules);
  const out: string[] = [];
  for (const command of commands) {
    const facts = { tool: "bash", readOnlyTool: false, shell: await classifyShell(command) };
    out.push(evaluate(facts, { profile, rules: compiled, sessionApprovals: new Set() }).action);
  }
  return out;
}

Deno.test("evaluate(): a deny or ask rule names its program in any case", async () => {
  const spelled = [
    "GIT push",
    "Git push",
    "/usr/bin/GIT push",
    "GIT-push",
    "GIT -C . push",
    "CURL x",
  ];
  equal(
    (await actions([
      { action: "deny", command: "git push" },
      { action: "deny", command: "curl" },
    ], spelled)).join(),
    spelled.map(() => "deny").join(),
  );
  const asked = await actions([{ action: "ask", command: "git push" }], ["GIT push"]);
  equal(asked[0], "ask");
});

Deno.test("evaluate(): an allow rule still names its program exactly", async () => {
  const [exact, other] = await actions([{ action: "allow", command: "npm test" }], [
    "npm test",
    "NPM test",
  ]);
  equal(exact, "allow");
  equal(other, "ask");
});
