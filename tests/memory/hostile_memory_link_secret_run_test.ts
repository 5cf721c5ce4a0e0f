/**
 * The whole run: a repository's `MEMORY.md`, `AGENTS.md` and `.tern/SYSTEM.md` are links to a
 * file of the person's that holds the key tern holds and a key format. No request tern sends the
 * model holds either, nor does what `tern context` shows.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { runScriptedCalls } from "../support/scripted_calls.ts";
import { runTern } from "../support/tern_process.ts";

const HELD = "sk-heldkey0123456789abcdefghij";
const FORMAT = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

Deno.test("tern run and tern context mask keys in context and memory files a link leads to", async () => {
  const root = Deno.realPathSync(await Deno.makeTempDir({ prefix: "tern-memlink-run-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  try {
    await Deno.mkdir(join(dir, "backend"), { recursive: true });
    await Deno.mkdir(join(dir, ".tern"), { recursive: true });
    await Deno.mkdir(home);
    await Deno.writeTextFile(join(dir, "backend", ".env"), `OTHER_KEY=${HELD}\nGH=${FORMAT}\n`);
    await Deno.symlink("backend/.env", join(dir, "MEMORY.md"));
    await Deno.symlink("backend/.env", join(dir, "AGENTS.md"));
    await Deno.symlink("../backend/.env", join(dir, ".tern", "SYSTEM.md"));
    const env = { TERN_API_KEY: HELD };
    const run = await runScriptedCalls({ dir, home }, [], env);
    equal(run.code, 0, run.stderr);
    ok(run.requests.includes("OTHER_KEY="), "the linked file reached the system prompt");
    ok(!run.requests.includes(HELD), "the held key reached the model");
    ok(!run.requests.includes(FORMAT), "the token reached the model");
    const context = await runTern(["context", "--json"], {
      cwd: dir,
      env: { TERN_HOME: home, HOME: home, ...env },
    });
    equal(context.code, 0, context.stderr);
    ok(context.stdout.includes("MEMORY.md"), context.stdout);
    ok(!context.stdout.includes(HELD) && !context.stdout.includes(FORMAT), context.stdout);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
