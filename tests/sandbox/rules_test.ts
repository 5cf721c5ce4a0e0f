import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { exitCodeForError } from "../../src/cli/exit_codes.ts";
import { ConfigError } from "../../src/config/errors.ts";
import type { PermissionRule } from "../../src/config/schema.ts";
import {
  allowRulesCover,
  type CompiledRule,
  compileRules,
  plainCommand,
  ruleApplies,
  type RuleSubject,
} from "../../src/sandbox/rules.ts";
import { analyzeShell } from "../../src/sandbox/shell/parse.ts";

async function one(rule: PermissionRule): Promise<CompiledRule> {
  const [compiled] = await compileRules([rule]);
  return compiled;
}

async function bash(command: string): Promise<RuleSubject> {
  return { tool: "bash", shell: await analyzeShell(command) };
}

/** The commands among `commands` that `rule` applies to. */
async function appliesTo(rule: CompiledRule, commands: string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const command of commands) {
    if (ruleApplies(rule, await bash(command))) hits.push(command);
  }
  return hits;
}

Deno.test("compileRules() labels each rule and infers its tool", async () => {
  const rules = await compileRules([
    { action: "deny", command: "  git   push ", reason: "Pushing is for people" },
    { action: "allow", tool: "write", path: "src/**" },
    { action: "ask", path: ".env*" },
    { action: "allow", tool: "edit" },
  ]);
  deepEqual(rules.map((r) => [r.action, r.label, r.tool, r.words, r.reason]), [
    ["deny", 'deny command "  git   push "', "bash", ["git", "push"], "Pushing is for people"],
    ["allow", 'allow tool "write" path "src/**"', "write", undefined, undefined],
    ["ask", 'ask path ".env*"', "*", undefined, undefined],
    ["allow", 'allow tool "edit"', "edit", undefined, undefined],
  ]);
});

Deno.test("ruleApplies() matches a command prefix word by word", async () => {
  const rule = await one({ action: "deny", command: "git push" });
  deepEqual(
    await appliesTo(rule, [
      "git push",
      "git push origin main --force",
      "git pull",
      "git",
      "git status push",
      "gitpush",
      'git "push"',
    ]),
    ["git push", "git push origin main --force", 'git "push"'],
  );
});

Deno.test("ruleApplies() lets * stand for exactly one word", async () => {
  const rule = await one({ action: "deny", command: "npm run *" });
  deepEqual(
    await appliesTo(rule, ["npm run build", "npm run lint --fix", "npm run", "npm test"]),
    ["npm run build", "npm run lint --fix"],
  );
  const anyName = await one({ action: "deny", command: "* --version" });
  deepEqual(await appliesTo(anyName, ["node --version", "node -v", "--version"]), [
    "node --version",
  ]);
});

Deno.test("ruleApplies() compares the command name without its folder", async () => {
  const rule = await one({ action: "deny", command: "rm" });
  deepEqual(
    await appliesTo(rule, ["/bin/rm -rf x", "/usr/bin/rm x", "./tools/rm x", "\\rm x", "rmdir x"]),
    ["/bin/rm -rf x", "/usr/bin/rm x", "./tools/rm x", "\\rm x"],
  );
});

Deno.test("ruleApplies() a deny rule applies when any part of the command matches", async () => {
  const rule = await one({ action: "deny", command: "git push" });
  const hidden = [
    "ls && git push",
    "false || git push",
    "ls; git push",
    "git log | git push",
    "git push &",
    "ls\ngit push",
    "echo $(git push)",
    "echo `git push`",
    "cat <(git push)",
    "bash -c 'git push'",
    'sh -c "ls && git push"',
    'eval "git push"',
    "(cd sub && git push)",
    "{ ls; git push; }",
    "if true; then git push; fi",
    "env FOO=1 git push",
    "FOO=1 git push",
    "timeout 5 git push",
    "sudo git push",
    "sudo -u bob git push",
    "find . -name x | xargs git push",
    "nice -n 5 env A=1 timeout -s KILL 5 git push",
    "/usr/bin/git push",
  ];
  deepEqual(await appliesTo(rule, hidden), hidden);
});

Deno.test("ruleApplies() a deny rule ignores the words when they are only arguments", async () => {
  const rule = await one({ action: "deny", command: "git push" });
  deepEqual(
    await appliesTo(rule, ['echo "git push"', "grep -r 'git push' .", "git log --grep push"]),
    [],
  );
});

Deno.test("ruleApplies() an ask rule applies to any part like a deny rule", async () => {
  const rule = await one({ action: "ask", command: "curl" });
  deepEqual(await appliesTo(rule, ["ls | curl -d @- x", "echo $(curl x)", "ls"]), [
    "ls | curl -d @- x",
    "echo $(curl x)",
  ]);
});

Deno.test("ruleApplies() an allow rule needs every part covered and nothing hidden", async () => {
  const rule = await one({ action: "allow", command: "npm test" });
  deepEqual(
    await appliesTo(rule, [
      "npm test",
      "npm test --watch",
      "npm test && npm test",
      "npm test && curl evil",
      "curl evil; npm test",
      "npm test | tee out.log",
      "npm test $(evil)",
      "npm test `evil`",
      'eval "npm test"',
      "bash -c 'npm test'",
      "echo $(npm test)",
      "npm test 'unterminated",
      "",
    ]),
    ["npm test", "npm test --watch", "npm test && npm test"],
  );
});

Deno.test("ruleApplies() no command rule applies to a command that does not parse", async () => {
  const subject = await bash("git push 'oops");
  equal(subject.shell?.ok, false);
  for (const action of ["allow", "ask", "deny"] as const) {
    equal(ruleApplies(await one({ action, command: "git push" }), subject), false, action);
  }
});

Deno.test("ruleApplies() a command rule applies only to bash calls", async () => {
  const rule = await one({ action: "deny", command: "rm" });
  equal(ruleApplies(rule, { tool: "write", path: "rm" }), false);
  equal(ruleApplies(rule, { tool: "bash" }), false, "a bash call without a parsed command");
});

Deno.test("ruleApplies() matches path globs relative to the workspace, dot files included", async () => {
  const secrets = await one({ action: "deny", path: "secrets/**" });
  const pem = await one({ action: "deny", path: "**/*.pem" });
  const env = await one({ action: "deny", path: ".env*" });
  const top = await one({ action: "deny", path: "*.ts" });
  const read = (path: string): RuleSubject => ({ tool: "read", path });
  const hits = (rule: CompiledRule, paths: string[]) =>
    paths.filter((path) => ruleApplies(rule, read(path)));
  deepEqual(hits(secrets, ["secrets/a/b.txt", "secrets/.hidden", "src/secrets.ts"]), [
    "secrets/a/b.txt",
    "secrets/.hidden",
  ]);
  deepEqual(hits(pem, ["key.pem", "a/.ssh/id.pem", "key.pem.txt"]), ["key.pem", "a/.ssh/id.pem"]);
  deepEqual(hits(env, [".env", ".env.local", "sub/.env", "env"]), [".env", ".env.local"]);
  deepEqual(hits(top, ["main.ts", "src/main.ts"]), ["main.ts"]);
});

Deno.test("ruleApplies() a path rule needs a path and, with a tool, that tool", async () => {
  const anyTool = await one({ action: "deny", path: "secrets/**" });
  const writes = await one({ action: "allow", tool: "write", path: "src/**" });
  equal(ruleApplies(anyTool, { tool: "edit", path: "secrets/k" }), true);
  equal(ruleApplies(anyTool, { tool: "list" }), false);
  equal(ruleApplies(anyTool, await bash("cat secrets/k")), false);
  equal(ruleApplies(writes, { tool: "write", path: "src/a.ts" }), true);
  equal(ruleApplies(writes, { tool: "edit", path: "src/a.ts" }), false);
  equal(ruleApplies(writes, { tool: "write", path: "test/a.ts" }), false);
});

Deno.test("ruleApplies() a tool-only rule applies to every call of that tool", async () => {
  const write = await one({ action: "deny", tool: "write" });
  const shell = await one({ action: "deny", tool: "bash" });
  equal(ruleApplies(write, { tool: "write", path: "a" }), true);
  equal(ruleApplies(write, { tool: "write" }), true);
  equal(ruleApplies(write, { tool: "edit", path: "a" }), false);
  equal(ruleApplies(shell, await bash("ls")), true);
  equal(ruleApplies(shell, await bash("ls 'x")), true, "even a command that does not parse");
});

Deno.test("allowRulesCover() needs an allow rule for every part", async () => {
  const rules = await compileRules([
    { action: "allow", command: "npm test" },
    { action: "allow", command: "tee" },
    { action: "deny", command: "curl" },
    { action: "ask", command: "ls" },
    { action: "allow", tool: "bash" },
  ]);
  const covers = async (command: string) => allowRulesCover(rules, await analyzeShell(command));
  equal(await covers("npm test | tee out.log"), true);
  equal(await covers("npm test && /usr/bin/tee x"), true);
  equal(await covers("npm test | curl -d @- x"), false, "a deny rule does not cover");
  equal(await covers("ls"), false, "an ask rule does not cover");
  equal(await covers("npm run build"), false, "a tool-only allow rule does not cover");
  equal(await covers("npm test $(tee x)"), false, "hidden code is never covered");
  equal(await covers('eval "npm test"'), false);
  equal(await covers("npm test 'x"), false, "an unparsable command is never covered");
  equal(await covers(""), false, "an empty command is not covered");
  equal(await covers("# only a comment"), false);
});

Deno.test("compileRules() accepts rules whose examples hold", async () => {
  const rules = await compileRules([
    {
      action: "deny",
      command: "git push",
      match: ["git push", "ls && git push --force", "sudo git push", "echo $(git push)"],
      notMatch: ["git pull", "echo git push"],
    },
    {
      action: "allow",
      command: "npm test",
      match: ["npm test", "npm test --watch"],
      notMatch: ["npm test && curl evil", "npm test $(evil)", 'eval "npm test"'],
    },
    { action: "ask", path: "**/*.pem", match: ["a/b.pem", "k.pem"], notMatch: ["a/b.pem.txt"] },
    { action: "allow", tool: "write", match: ["write"], notMatch: ["edit", "bash"] },
  ]);
  equal(rules.length, 4);
});

Deno.test("compileRules() rejects a match example the rule does not match", async () => {
  await rejects(
    compileRules([
      { action: "allow", command: "ls" },
      { action: "deny", command: "git push", match: ["git push", "git pull"] },
    ]),
    (error: unknown) => {
      ok(error instanceof ConfigError);
      equal(
        error.message,
        'Invalid permission rule 2 (deny command "git push"): example "git pull" should match ' +
          "but does not; fix the rule or its match/notMatch examples",
      );
      equal(error.key, "rules");
      equal(exitCodeForError(error), 2);
      return true;
    },
  );
});

Deno.test("compileRules() refuses a tool named with a capital letter, naming the tool meant", async () => {
  // Claude Code's names match none of tern's tools: such a deny rule would deny nothing.
  await rejects(
    compileRules([{ action: "deny", tool: "ask" }, { action: "deny", tool: "WebFetch" }]),
    (error: unknown) => {
      ok(error instanceof ConfigError);
      match(
        error.message,
        /^Invalid permission rule 2 \(deny tool "WebFetch"\): no tool is named "WebFetch": tern's tools are lower case \(did you mean "web_fetch"\?\)/,
      );
      return true;
    },
  );
  await rejects(compileRules([{ action: "deny", tool: "Bash" }]), /did you mean "bash"/);
  // An MCP tool's name keeps its server's case.
  equal((await compileRules([{ action: "deny", tool: "mcp__Srv__DropTable" }])).length, 1);
});

Deno.test("compileRules() rejects a notMatch example the rule matches", async () => {
  await rejects(
    compileRules([{ action: "deny", command: "rm", notMatch: ["ls", "/bin/rm -r x"] }]),
    (error: unknown) => {
      ok(error instanceof ConfigError);
      match(error.message, /^Invalid permission rule 1 \(deny command "rm"\): /);
      match(error.message, /example "\/bin\/rm -r x" should not match but does/);
      return true;
    },
  );
});

Deno.test("compileRules() checks allow examples with allow semantics", async () => {
  await rejects(
    compileRules([{ action: "allow", command: "npm test", match: ["npm test && curl evil"] }]),
    /rule 1 \(allow command "npm test"\): example "npm test && curl evil" should match but/,
  );
});

Deno.test("compileRules() checks path and tool examples", async () => {
  await rejects(
    compileRules([{ action: "deny", path: "*.env", match: ["config/.env"] }]),
    /rule 1 \(deny path "\*\.env"\): example "config\/.env" should match but does not/,
  );
  await rejects(
    compileRules([
      { action: "deny", command: "rm" },
      { action: "ask", tool: "edit", path: "src/**", match: ["src/a.ts"] },
      { action: "allow", tool: "write", notMatch: ["edit", "write"] },
    ]),
    /rule 3 \(allow tool "write"\): example "write" should not match but does/,
  );
});

Deno.test("ruleApplies() an allow rule does not cover sudo or variables not known harmless", async () => {
  const rule = await one({ action: "allow", command: "git push" });
  deepEqual(
    await appliesTo(rule, [
      "git push",
      "CI=1 git push",
      "HOME=evil git push",
      "XDG_CONFIG_HOME=evil git push",
      "LANG=C.UTF-8 git push",
      "env TERM=dumb timeout 60 git push",
      "sudo git push",
      "doas git push",
      "GIT_SSH_COMMAND='sh -c evil' git push",
      "env LD_PRELOAD=/tmp/x.so git push",
      "PATH=/tmp/evil:$PATH git push",
    ]),
    ["git push", "LANG=C.UTF-8 git push", "env TERM=dumb timeout 60 git push"],
  );
  const rules = await compileRules([{ action: "allow", command: "git push" }]);
  equal(allowRulesCover(rules, await analyzeShell("sudo git push")), false);
  equal(allowRulesCover(rules, await analyzeShell("NODE_OPTIONS=--require=x git push")), false);
  equal(allowRulesCover(rules, await analyzeShell("CI=1 git push")), false);
  equal(allowRulesCover(rules, await analyzeShell("TZ=UTC NO_COLOR=1 git push")), true);
});

Deno.test("plainCommand() is false for sudo, doas, unlisted variables and file output", async () => {
  const first = async (command: string) => {
    const analysis = await analyzeShell(command);
    ok(analysis.ok);
    return plainCommand(analysis.commands[0]);
  };
  equal(await first("npm test"), true);
  equal(await first("NODE_ENV=test npm test"), false);
  equal(await first("LC_ALL=C npm test 2>&1 >/dev/null"), true);
  equal(await first("LANG=../../evil npm test"), false);
  equal(await first("npm test > package.json"), false);
  equal(await first("npm test 2>> log"), false);
  equal(await first("sudo -u bob npm test"), false);
  equal(await first("BASH_ENV=./x npm test"), false);
  equal(await first("env GIT_CONFIG_COUNT=1 npm test"), false);
});

Deno.test("ruleApplies() lets deny rules see through git's global options, but not allow rules", async () => {
  const [deny, allow] = await compileRules([
    { action: "deny", command: "git push" },
    { action: "allow", command: "git log" },
  ]);
  const subject = async (command: string) => ({ tool: "bash", shell: await analyzeShell(command) });
  equal(ruleApplies(deny, await subject("git -C ../other push origin")), true);
  equal(ruleApplies(deny, await subject("git --no-pager -c a=b push")), true);
  equal(ruleApplies(deny, await subject("git -C push status")), false);
  equal(ruleApplies(allow, await subject("git -c core.pager=evil log")), false);
  equal(ruleApplies(allow, await subject("git log --oneline")), true);
});

Deno.test("ruleApplies() matches tool names with * (MCP tools of one server)", async () => {
  const [rule] = await compileRules([{
    action: "deny",
    tool: "mcp__github__*",
    match: ["mcp__github__create_issue", "mcp__github__"],
    notMatch: ["mcp__gitlab__create_issue", "read", "xmcp__github__a"],
  }]);
  equal(ruleApplies(rule, { tool: "mcp__github__delete_repo" }), true);
  equal(ruleApplies(rule, { tool: "mcp__github.x" }), false);
});

Deno.test("ruleApplies() an allow rule covers a bare name on PATH or exactly the path it names", async () => {
  const bare = await one({ action: "allow", command: "npm test" });
  deepEqual(
    await appliesTo(bare, [
      "npm test",
      "/usr/bin/npm test",
      "./npm test",
      "/tmp/npm test",
      "node_modules/.bin/npm test",
      "npm test > package.json",
      "npm test 2>/dev/null >&2",
    ]),
    ["npm test", "/usr/bin/npm test", "npm test 2>/dev/null >&2"],
  );
  const path = await one({ action: "allow", command: "./scripts/check.sh" });
  deepEqual(await appliesTo(path, ["./scripts/check.sh -q", "scripts/check.sh", "check.sh"]), [
    "./scripts/check.sh -q",
  ]);
  const anyName = await one({ action: "allow", command: "* --version" });
  deepEqual(await appliesTo(anyName, ["node --version", "tools/git --version"]), [
    "node --version",
  ]);
});

Deno.test("ruleApplies() a deny rule reads git's helpers as git", async () => {
  const rule = await one({ action: "deny", command: "git push" });
  deepEqual(
    await appliesTo(rule, ["/usr/lib/git-core/git-push origin", "git-push", "git-pull"]),
    ["/usr/lib/git-core/git-push origin", "git-push"],
  );
});

Deno.test("compileRules() gives a deny rule with an absolute path what it reaches: matches, below them, folders that may hold one", async () => {
  const [plain, glob, braces, allow] = await compileRules([
    { action: "deny", path: "/srv/app/secrets/" },
    { action: "deny", path: "/srv/*/conf/*.pem" },
    { action: "deny", path: "/srv/{a,b/c}/key" },
    { action: "allow", tool: "read", path: "/srv/app" },
  ]);
  const reaches = (rule: typeof plain, path: string) => rule.reaches?.(path) ?? false;
  for (const path of ["/", "/srv", "/srv/app", "/srv/app/secrets", "/srv/app/secrets/k"]) {
    ok(reaches(plain, path), path);
  }
  for (const path of ["/srv/app/public", "/srv/apps", "/etc"]) ok(!reaches(plain, path), path);
  for (const path of ["/srv/x", "/srv/x/conf", "/srv/x/conf/a.pem", "/srv/x/conf/a.pem/b"]) {
    ok(reaches(glob, path), path);
  }
  for (const path of ["/srv/x/data", "/srv/x/conf/a.txt", "/opt"]) ok(!reaches(glob, path), path);
  ok(reaches(braces, "/srv/z"));
  ok(!reaches(braces, "/opt/a"));
  equal(allow.reaches, undefined);
});

Deno.test("compileRules() refuses a path that starts with ~ or a variable, which would match nothing", async () => {
  for (const path of ["~/.aws/**", "$HOME/.ssh", " ~/secrets"]) {
    await rejects(compileRules([{ action: "deny", path }]), ConfigError);
  }
  await rejects(
    compileRules([{ action: "deny", path: "~/.aws" }]),
    /Invalid permission rule 1 \(deny path "~\/\.aws"\): the path "~\/\.aws" is not expanded/,
  );
  equal((await compileRules([{ action: "deny", path: "docs/~draft" }])).length, 1);
});
