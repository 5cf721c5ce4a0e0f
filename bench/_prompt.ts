/**
 * Start to a usable interactive prompt, and its floor, through the same pseudo-terminal path
 * (bench/_pty.ts): `bin/tern` until the editor's placeholder appears (then Ctrl-D), and
 * `deno run` of an empty script until it exits.
 */
import { join } from "node:path";
import { ROOT } from "../tests/support/tern_process.ts";
import { benchEnv, inTerminal, PROMPT } from "./_pty.ts";

/** Where the interactive runs happen: `env` is added to bench/_pty.ts's (e.g. DENO_DIR). */
export interface PromptPlace {
  workspace: string;
  home: string;
  env: Record<string, string>;
}

/** Milliseconds from spawning `bin/tern` to its prompt on screen; `baseUrl` is the model's. */
export async function timePrompt(place: PromptPlace, baseUrl: string): Promise<number> {
  const { workspace, home } = place;
  const env = { ...benchEnv(home), ...place.env, TERN_BASE_URL: baseUrl };
  const run = inTerminal([join(ROOT, "bin/tern")], { cwd: workspace, env });
  const writer = run.child.stdin.getWriter();
  try {
    const at = await run.output.seen(PROMPT);
    await writer.write(new TextEncoder().encode("\x04")); // Ctrl-D on an empty editor
    await writer.close();
    await run.output.done;
    const status = await run.child.status;
    if (!status.success) throw new Error(`tern did not exit cleanly:\n${run.output.text}`);
    return at - run.start;
  } catch (error) {
    try {
      run.child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    throw error;
  }
}

/** Milliseconds from spawning `deno run` of an empty script in the pty to its exit. */
export async function timeEmptyScript(place: PromptPlace): Promise<number> {
  const { workspace, home } = place;
  const script = join(workspace, "empty.js");
  await Deno.writeTextFile(script, "");
  const env = { ...benchEnv(home), ...place.env };
  const run = inTerminal([Deno.execPath(), "run", "--no-config", script], { cwd: workspace, env });
  await run.child.stdin.close();
  await run.output.done;
  const status = await run.child.status;
  const ended = performance.now();
  if (!status.success) throw new Error(`The empty script failed:\n${run.output.text}`);
  return ended - run.start;
}
