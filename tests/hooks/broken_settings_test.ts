/**
 * Hook settings files that are broken or say too much: a project file that is not JSON is
 * skipped (named, with its reason) and the person's hooks still run; `tern hooks list` and
 * `trust` say so plainly; a timeout too large is cut to the cap instead of firing at once.
 */
import { equal, match, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { MAX_HOOK_TIMEOUT_S, readHookSources } from "../../src/sandbox/hooks/config.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { runTern } from "../support/tern_process.ts";

const USER = JSON.stringify({
  hooks: {
    PreToolUse: [{
      matcher: "Bash|Write",
      hooks: [{ type: "command", command: "~/.tern/hooks/guard.sh" }],
    }],
  },
});

async function withPlaces(
  body: (places: { ternHome: string; workspace: string; root: string }) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "hooks-broken-" }));
  const ternHome = join(root, "home", ".tern");
  const workspace = join(root, "ws");
  await Deno.mkdir(ternHome, { recursive: true });
  await Deno.mkdir(join(workspace, ".claude"), { recursive: true });
  try {
    await body({ ternHome, workspace, root });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("loadHooks() keeps the person's hooks when a project settings file is not JSON", async () => {
  await withPlaces(async (places) => {
    await Deno.writeTextFile(join(places.ternHome, "settings.json"), USER);
    const broken = join(places.workspace, ".claude", "settings.json");
    await Deno.writeTextFile(broken, "{ not json");
    const told: string[] = [];
    const hooks = await loadHooks(places, (text) => told.push(text));
    equal(hooks.active.length, 1);
    equal(hooks.active[0].command, "~/.tern/hooks/guard.sh");
    const skipped = hooks.sources.find((loaded) => loaded.source.file === broken)!;
    equal(skipped.trusted, false);
    match(skipped.source.unreadable!, /not valid JSON/);
    equal(told.length, 1);
    ok(told[0].includes(`"${broken}"`), told[0]);
    match(told[0], /not valid JSON.*your own hooks still run/);
  });
});

Deno.test("loadHooks() fails with a ConfigError on the person's own broken settings", async () => {
  await withPlaces(async (places) => {
    await Deno.writeTextFile(join(places.ternHome, "settings.json"), "{ not json");
    await rejects(loadHooks(places, () => {}), (error) => {
      ok(error instanceof ConfigError);
      match(error.message, /Cannot read hooks from ".*settings\.json": not valid JSON/);
      return true;
    });
  });
});

Deno.test("readHookSources() cuts a timeout past the cap and says so", async () => {
  await withPlaces(async (places) => {
    const entry = (timeout: string) =>
      `{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": ${timeout}}]}`;
    await Deno.writeTextFile(
      join(places.ternHome, "settings.json"),
      `{"hooks": {"PreToolUse": [${entry("3000000")}, ${entry("1e400")}, ${entry("-1")}]}}`,
    );
    const [user] = await readHookSources(places);
    equal(user.hooks.length, 2);
    ok(user.hooks.every((hook) => hook.timeoutS === MAX_HOOK_TIMEOUT_S));
    equal(user.problems.length, 3);
    match(user.problems[0], /"PreToolUse\[0\]\.hooks\[0\]\.timeout": 3000000 s is more than 3600/);
    match(user.problems[1], /"PreToolUse\[1\]\.hooks\[0\]\.timeout": Infinity s is more than/);
    match(
      user.problems[2],
      /"PreToolUse\[2\]\.hooks\[0\]\.timeout": expected a positive .*left out/,
    );
  });
});

Deno.test("tern hooks list and trust name a broken project settings file, no stack trace", async () => {
  await withPlaces(async (places) => {
    await Deno.writeTextFile(join(places.ternHome, "settings.json"), USER);
    await Deno.writeTextFile(join(places.workspace, ".claude", "settings.json"), "{ not json");
    const env = { HOME: join(places.root, "home"), TERN_HOME: places.ternHome };
    const list = await runTern(["hooks", "list"], { cwd: places.workspace, env });
    equal(list.code, 0, list.stderr);
    ok(!list.stderr.includes("internal error"), list.stderr);
    match(
      list.stdout,
      /\.claude\/settings\.json \(project, UNREADABLE: its hooks never run \(not valid JSON/,
    );
    match(list.stdout, /PreToolUse \[Bash\|Write\]: ~\/\.tern\/hooks\/guard\.sh/);
    const trust = await runTern(["hooks", "trust"], { cwd: places.workspace, env });
    equal(trust.code, 1, trust.stderr);
    ok(!trust.stderr.includes("internal error"), trust.stderr);
    match(trust.stderr, /Cannot trust the project's hooks: ".*settings\.json" \(not valid JSON/);
    await Deno.stat(join(places.ternHome, "hooks-trust.json")).then(
      () => ok(false, "something was trusted"),
      (error) => ok(error instanceof Deno.errors.NotFound),
    );
  });
});
