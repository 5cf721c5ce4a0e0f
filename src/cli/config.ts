/** `tern config`: the effective configuration and where each value came from, never the key. */
import { describeConfig, loadConfig, type TernConfig } from "../config/mod.ts";
import { SecretMasker } from "../sandbox/secrets.ts";
import { processWriters, readEnv, resolveWorkspace, terminalWriters } from "./process_env.ts";
import type { RunFlags } from "./run.ts";

/**
 * Prints the configuration of the workspace `flags.cwd` names, as a command there would load it.
 * Its values come from files a repository may write, so they go through the terminal sanitizer
 * (`terminalWriters`); and the table goes through the secret masker, with the keys tern holds:
 * a key pasted into a setting (a checker's command, a rule's reason, a model name) or one of a
 * known format (a GitHub token, a bearer token) is shown as a `[REDACTED]` marker.
 * @throws {InputError} when the workspace is not a folder, as every command bound to one does;
 * {@linkcode ConfigError} (after the table) when the sandbox profile is unknown, as a run would.
 */
export async function showConfig(flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const loaded = await loadConfig({ cwd: workspace, flags: flags.config });
  const { out } = terminalWriters(processWriters());
  // Shown first all the same: the table says where the profile that is refused came from.
  const { apiKey, apiKeys } = loaded.config;
  const masker = new SecretMasker([apiKey ?? "", ...Object.values(apiKeys)]);
  const mask = (text: string) => masker.mask(text);
  out(
    describeConfig(loaded.config, loaded.sources, { withheld: loaded.withheldKeys, mask }) + "\n",
  );
  await checkProfile(loaded.config, workspace);
  return 0;
}

/**
 * Refuses an unknown sandbox profile as every run does before it starts (the rules' examples
 * are left to the run and `tern doctor`).
 * @throws {ConfigError} naming the profile and the known ones.
 */
export async function checkProfile(config: TernConfig, workspace: string): Promise<void> {
  const { checkSandboxConfig } = await import("../harness/sandbox_config.ts");
  await checkSandboxConfig(
    { profile: config.profile, profiles: config.profiles, rules: [] },
    workspace,
    readEnv("HOME"),
  );
}
