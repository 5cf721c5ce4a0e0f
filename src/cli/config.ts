/** `tern config`: the effective configuration and where each value came from, never the key. */
import { describeConfig, loadConfig } from "../config/mod.ts";
import { processWriters, terminalWriters } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

/**
 * Prints the configuration. Its values come from files a repository may write, so they go
 * through the terminal sanitizer (`terminalWriters`).
 */
export async function showConfig(flags: RunFlags): Promise<number> {
  const loaded = await loadConfig({ cwd: flags.cwd, flags: flags.config });
  const { out } = terminalWriters(processWriters());
  out(describeConfig(loaded.config, loaded.sources, loaded.withheldKeys) + "\n");
  return 0;
}
