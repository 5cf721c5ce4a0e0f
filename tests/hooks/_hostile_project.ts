/**
 * A workspace with trusted project hooks for the hostile-hook tests: `.claude/settings.json`
 * holds `hooks`, `.hooks/` their scripts, tern's home and HOME a folder beside it, and the hooks
 * trusted as `tern hooks trust` would.
 */
import { join } from "node:path";
import { loadHooks } from "../../src/sandbox/hooks/load.ts";
import { trustHooks } from "./_trust.ts";
import type { ModelRequest } from "../../src/llm/types.ts";

/** Runs `body` in a fresh workspace whose trusted hooks are `hooks`, with `scripts` in `.hooks/`. */
export async function withHookProject(
  hooks: Record<string, unknown>,
  scripts: Record<string, string>,
  body: (dir: string) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/var/tmp", prefix: "hooks-" }));
  const dir = join(root, "ws");
  const home = join(root, "home");
  await Deno.mkdir(join(dir, ".hooks"), { recursive: true });
  await Deno.mkdir(join(dir, ".claude"));
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(dir, ".claude", "settings.json"), JSON.stringify({ hooks }));
  for (const [name, text] of Object.entries(scripts)) {
    await Deno.writeTextFile(join(dir, ".hooks", name), text + "\n");
  }
  const saved = ["TERN_HOME", "HOME", "TERN_API_KEY"].map((name) => [name, Deno.env.get(name)]);
  Deno.env.set("TERN_HOME", home);
  Deno.env.set("HOME", home);
  Deno.env.set("TERN_API_KEY", "sk-test");
  try {
    const places = { ternHome: home, workspace: dir };
    await trustHooks(places, (await loadHooks(places)).sources.map((loaded) => loaded.source));
    await body(dir);
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name!);
      else Deno.env.set(name!, value);
    }
    await Deno.remove(root, { recursive: true });
  }
}

/** Everything the model was sent in `request`, as one text. */
export function sent(request: ModelRequest): string {
  return JSON.stringify(request.messages);
}

/** The command lines of the host's processes that contain `text` (by `pgrep -f`). */
export async function processesWith(text: string): Promise<string[]> {
  const found = await new Deno.Command("pgrep", { args: ["-af", "--", text], stdout: "piped" })
    .output();
  return new TextDecoder().decode(found.stdout).split("\n").filter((line) => line !== "");
}
