/** `tern config`: the effective configuration and where each value came from, never the key. */
import { describeConfig, loadConfig } from "../config/mod.ts";
import type { RunFlags } from "./run.ts";

export async function showConfig(flags: RunFlags): Promise<number> {
  const loaded = await loadConfig({ cwd: flags.cwd, flags: flags.config });
  console.log(describeConfig(loaded.config, loaded.sources, loaded.withheldKeys));
  return 0;
}
