/**
 * Checks the sandbox settings before a run starts, so a bad profile or rule fails at once as a
 * ConfigError instead of at the first tool call. Light on purpose: the rest of the sandbox loads
 * while the first model request is in flight.
 */
import { ConfigError } from "../config/mod.ts";
import type { SandboxConfig } from "./agent_sandbox.ts";
import { compileProfile } from "../sandbox/profiles.ts";
import type { CompiledRule } from "../sandbox/rules.ts";

/**
 * Validates the profile name and compiles the rules (checking their examples; this loads the
 * shell parser only when there are rules).
 * @throws {ConfigError} for an unknown profile or a rule whose examples do not hold.
 */
export async function checkSandboxConfig(
  config: Pick<SandboxConfig, "profile" | "profiles" | "rules">,
  workspace: string,
  home: string | undefined,
): Promise<CompiledRule[]> {
  try {
    compileProfile(config.profile, { workspace, tmp: workspace, home, custom: config.profiles });
  } catch (error) {
    if (error instanceof RangeError) throw new ConfigError(error.message, { key: "profile" });
    throw error;
  }
  if (config.rules.length === 0) return [];
  const { compileRules } = await import("../sandbox/rules.ts");
  return await compileRules(config.rules);
}
