/**
 * tern's layered configuration: defaults < user `config.jsonc` < project `.tern/config.jsonc`
 * < `.env` < environment < flags, validated with zod, with errors that name the file, key,
 * line and column.
 *
 * ```ts
 * const { config, sources } = await loadConfig({ cwd: Deno.cwd(), flags: { model: "gpt-4.1" } });
 * console.log(describeConfig(config, sources));
 * ```
 */
export { checkFlags, loadConfig, type LoadConfigOptions, type LoadedConfig } from "./load.ts";
export { resolveTernHome } from "./tern_home.ts";
export {
  type ConfigFlags,
  DEFAULTS,
  type ModelSettings,
  type ProviderSettings,
  type TernConfig,
  type ThinkingChoice,
} from "./schema.ts";
export { ConfigError, type ConfigErrorDetails } from "./errors.ts";
export {
  describeConfig,
  type DescribeOptions,
  projectModelNotice,
  type WithheldKeys,
} from "./describe.ts";
export {
  type ConfigSource,
  describeSource,
  isExplicitSource,
  isFlagSource,
  isProjectSource,
} from "./sources.ts";
