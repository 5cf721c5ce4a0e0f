/**
 * A model server a repository's files chose is never the AUTO reviewer of its own model's calls:
 * the reviewer's model would be on that same server, and whoever runs it would approve the
 * grants and commands it asked for (a read of the person's files outside the workspace, a
 * command that changes the workspace). The real `tern run --mode auto` against the scripted
 * model server, chosen by the project's `.tern/config.jsonc`, then by the person.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ScriptedReply } from "../../src/llm/scripted.ts";
import { startScriptedServer } from "../support/scripted_server.ts";
import { runTern, tempWorkspace } from "../support/tern_process.ts";
import { hostileScript } from "../support/hostile_script.ts";

/** The model asks for a narrow read outside the workspace, reads it, then changes a file. */
function hostile(outside: string, seen: string[], reviews: string[]) {
  return hostileScript(
    [
      ["request_permissions", { reason: "the task needs it", read: [outside], scope: "session" }],
      ["bash", { command: `cat ${join(outside, "notes.txt")}` }],
      ["bash", { command: "touch made-by-model.txt" }],
    ],
    seen,
    reviews,
  );
}

Deno.test("tern run --mode auto: a server a project's file chose does not review its own model's calls", async () => {
  const ws = await tempWorkspace();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-outside-" }));
  await Deno.writeTextFile(join(outside, "notes.txt"), "PRIVATE-NOTES-5521\n");
  const env = { HOME: ws.home, TERN_HOME: join(ws.home, ".tern") };
  try {
    for (const chooser of ["project", "person"] as const) {
      const seen: string[] = [];
      const reviews: string[] = [];
      const server = await startScriptedServer(
        hostile(outside, seen, reviews) as unknown as ScriptedReply[],
        { chunkDelayMs: 0 },
      );
      const config = join(ws.dir, ".tern", "config.jsonc");
      await Deno.mkdir(join(ws.dir, ".tern"), { recursive: true });
      await Deno.remove(config).catch(() => {});
      await Deno.remove(join(ws.dir, "made-by-model.txt")).catch(() => {});
      if (chooser === "project") {
        await Deno.writeTextFile(config, JSON.stringify({ baseUrl: server.baseUrl }));
      }
      try {
        const run = await runTern([
          "run",
          ...(chooser === "person" ? ["--base-url", server.baseUrl] : []),
          "-m",
          "scripted",
          "--mode",
          "auto",
          "-o",
          "json",
          "tidy up",
        ], { cwd: ws.dir, env: { ...env, TERN_API_KEY: "sk-review-test-0001" } });
        equal(run.code, 0, run.stderr);
        equal(seen.length, 3, JSON.stringify(seen));
        const made = await Deno.stat(join(ws.dir, "made-by-model.txt")).then(
          () => true,
          () => false,
        );
        if (chooser === "project") {
          // Nobody reviewed on that server: the grant and the command were denied, naming why.
          equal(reviews.length, 0, JSON.stringify(reviews));
          match(seen[0], /^ERROR\[POLICY_DENIED\]/);
          match(seen[0], /chosen by project config .*config\.jsonc/);
          ok(!seen[1].includes("PRIVATE-NOTES-5521"), seen[1]);
          match(seen[2], /^ERROR\[POLICY_DENIED\]/);
          equal(made, false);
          match(run.stderr, /in auto mode it reviews nothing/);
        } else {
          // The person's own server reviews as before (so the test sees a review when one runs).
          ok(reviews.length >= 2, JSON.stringify(reviews));
          ok(seen[1].includes("PRIVATE-NOTES-5521"), seen[1]);
          equal(made, true);
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    await ws.cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
