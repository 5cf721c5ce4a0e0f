/** `tern config`: the effective configuration and where each value came from, never the key. */
import { describeConfig, loadConfig } from "../config/mod.ts";
import { processWriters, resolveWorkspace, terminalWriters } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

/**
 * Prints the configuration of the workspace `flags.cwd` names, as a command there would load it.
 * Its values come from files a repository may write, so they go through the terminal sanitizer
 * (`terminalWriters`).
 * @throws {InputError} when the workspace is not a folder, as every command bound to one does.
 */
export async function showConfig(flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const loaded = await loadConfig({ cwd: workspace, flags: flags.config });
  const { out } = terminalWriters(processWriters());
  out(describeConfig(loaded.config, loaded.sources, loaded.withheldKeys) + "\n");
  return 0;
}
