/**
 * A reader of tern's output that goes away (`tern … | head -1`) ends every command quietly:
 * exit 0 and no "internal error" on stderr, whichever way the command writes its output.
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { tempWorkspace, ternCommand } from "../support/tern_process.ts";

/** Runs `tern args` with its stdout's reading end closed before tern writes anything. */
async function withClosedStdout(args: string[], dir: string, home: string) {
  const child = ternCommand(args, {
    cwd: dir,
    env: { HOME: home, TERN_HOME: join(home, ".tern") },
  }, "null").spawn();
  await child.stdout.cancel();
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  return { code: status.code, stderr };
}

Deno.test("tern with a closed stdout ends quietly with exit 0 for every kind of writer", async () => {
  const ws = await tempWorkspace();
  try {
    // An audit log long enough not to fit a pipe's buffer at once.
    const audit = join(ws.home, ".tern", "audit");
    await Deno.mkdir(audit, { recursive: true });
    const record = JSON.stringify({
      v: 1,
      time: "2026-01-01T00:00:00.000Z",
      callId: "call_1",
      tool: "read",
      args: { path: "a.ts" },
      decision: "allow",
      decidedBy: "mode",
      sandbox: "worker",
      profile: "default",
      status: "SUCCEEDED",
      durationMs: 1,
    });
    await Deno.writeTextFile(join(audit, "run-1.jsonl"), `${record}\n`.repeat(2000));
    await Deno.writeTextFile(join(ws.dir, "AGENTS.md"), "# Rules\n" + "Be brief.\n".repeat(5000));
    for (const args of [["audit"], ["audit", "--json"], ["context"], ["--help"]]) {
      const { code, stderr } = await withClosedStdout(args, ws.dir, ws.home);
      equal(stderr.includes("internal error"), false, `tern ${args.join(" ")}: ${stderr}`);
      equal(code, 0, `tern ${args.join(" ")}: ${stderr}`);
    }
  } finally {
    await ws.cleanup();
  }
});
