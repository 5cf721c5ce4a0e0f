/**
 * Hooks run only inside bubblewrap: through the real `tern run`, a trusted project hook and the
 * person's own hook never run on the host under `:danger-full-access` or `--no-sandbox` (where
 * the agent's commands do), and the person is told once why; in the sandbox they run.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { HookRunner } from "../../src/sandbox/hooks/run.ts";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import { createUnsandboxedRunner } from "../../src/sandbox/shell_runner.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern } from "../support/tern_process.ts";
import { bwrapNeed, testWith } from "../support/needs.ts";

/** Each hook marks that it ran inside the workspace and, where it can, outside it. */
function mark(name: string, outside: string): string {
  return `cat >/dev/null; touch "$CLAUDE_PROJECT_DIR/ran-${name}"; ` +
    `touch ${outside}/ran-${name} 2>/dev/null; true`;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

async function runWith(args: string[]): Promise<{ ran: string[]; stderr: string }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  const outside = join(root, "outside");
  for (const dir of [join(ws, ".tern"), home, outside]) await Deno.mkdir(dir, { recursive: true });
  const hook = (name: string) => [{ hooks: [{ type: "command", command: mark(name, outside) }] }];
  await Deno.writeTextFile(
    join(ws, ".tern", "settings.json"),
    JSON.stringify({
      hooks: { SessionStart: hook("project-start"), PreToolUse: hook("project-pre") },
    }),
  );
  await Deno.writeTextFile(
    join(home, "settings.json"),
    JSON.stringify({ hooks: { SessionStart: hook("user-start") } }),
  );
  const places = { ternHome: home, workspace: ws };
  await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
  let round = 0;
  const server = await startScriptedServer(() =>
    round++ === 0
      ? { toolCalls: [{ id: "c0", name: "bash", arguments: '{"command": "echo hi"}' }] }
      : { text: "done" }
  );
  try {
    const out = await runTern(
      ["run", "--base-url", server.baseUrl, "-m", "scripted", ...args, "hello"],
      { cwd: ws, env: { HOME: home, TERN_HOME: home } },
    );
    equal(out.code, 0, out.stderr);
    const ran: string[] = [];
    for (const name of ["project-start", "project-pre", "user-start"]) {
      if (await exists(join(ws, `ran-${name}`))) ran.push(name);
      if (await exists(join(outside, `ran-${name}`))) ran.push(`${name} outside`);
    }
    return { ran, stderr: out.stderr };
  } finally {
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
}

for (
  const [flags, why] of [
    [["--profile", ":danger-full-access"], /profile ":danger-full-access" runs shell commands/],
    [["--no-sandbox"], /--no-sandbox: shell commands run without bubblewrap/],
  ] as const
) {
  Deno.test(`tern run ${flags.join(" ")}: no hook runs on the host, and the person is told once`, async () => {
    for (const mode of ["ask", "bypass"]) {
      const { ran, stderr } = await runWith([...flags, "--mode", mode]);
      equal(ran.length, 0, `hooks ran: ${ran.join(", ")}`);
      const told = stderr.match(/No hooks run in this session[^\n]*/g) ?? [];
      equal(told.length, 1, stderr);
      match(told[0], /hooks run only inside the bubblewrap sandbox/);
      match(told[0], why);
    }
  });
}

testWith(
  [bwrapNeed],
  "tern run: in the sandbox the person's and trusted project hooks run",
  async () => {
    const { ran, stderr } = await runWith(["--mode", "bypass"]);
    equal(ran.sort().join(", "), "project-pre, project-start, user-start");
    ok(!stderr.includes("No hooks run"), stderr);
  },
);

Deno.test("HookRunner never runs a hook through a shell that is not confined", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hooks-host-" }));
  const told: string[] = [];
  try {
    const runner = new HookRunner({
      hooks: [{ event: "Stop", matcher: "", command: `touch ${dir}/ran`, timeoutS: 5 }],
      shell: () => ({ run: createUnsandboxedRunner({ PATH: "/usr/bin:/bin" }), confined: false }),
      warn: (text) => told.push(text),
      workspace: dir,
      sessionId: "test",
      transcriptPath: "",
      profile: ":danger-full-access",
      mode: "ask",
    });
    const first = await runner.fire("Stop", {});
    await runner.fire("Stop", {});
    ok(!(await exists(join(dir, "ran"))));
    // Told once for the session, not again as a note of every outcome.
    equal(first.notes.length, 0);
    equal(told.length, 1);
    match(told[0], /No hooks run in this session/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
