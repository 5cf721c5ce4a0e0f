/**
 * The shape of tern's configuration: the resolved `TernConfig` and the structures its keys hold.
 * What each key accepts, its default, variables and flag are in the settings table
 * (`settings.ts`).
 */
import { checkRule, type SettingValue } from "./rules.ts";
import type { ResourceLimits } from "./types.ts";
import type { ConfigSource } from "./sources.ts";
import {
  type ResolvedSettings,
  SETTING_KEYS,
  type SettingKey,
  settingOf,
  SETTINGS,
} from "./settings.ts";

export { type Rule, type SettingValue } from "./rules.ts";
export type {
  CustomProfile,
  ModelSettings,
  PermissionRule,
  ProviderSettings,
  ResourceLimits,
  SandboxSettings,
} from "./types.ts";
export {
  type ConfigFlags,
  DEFAULT_LIMITS,
  DEFAULTS,
  PROJECT_PROFILES,
  type SettingKey,
  type Settings,
} from "./settings.ts";
/**
 * The resolved configuration every part of tern reads: a value for every key of the settings
 * table (`settings.ts`, where each key is documented) that has a default, the others when set,
 * plus what is not a setting of its own. Print it with `describeConfig()`.
 */
export type TernConfig = Omit<ResolvedSettings, "apiKeyEnv"> & {
  /** Absolute path of the user's tern directory (`TERN_HOME`, else `~/.tern`). */
  ternHome: string;
  /** Never printed: `describeConfig()` shows only whether it is set and where it came from. */
  apiKey?: string;
  /**
   * Values of the key variables tern knows of (`TERN_API_KEY`, `OPENAI_API_KEY`,
   * `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY` and every `apiKeyEnv`), by variable name, from
   * the environment or `.env`. Never printed; each key goes only to its own provider.
   */
  apiKeys: Record<string, string>;
  /**
   * The variables the settings name as holding a key (`apiKeyEnv`, each provider's and
   * `indexEmbeddings`' `apiKeyEnv`, `webSearch.keyEnv`, `webFetch.readerKeyEnv`), set or not:
   * a project's MCP config may not pass them to a server. Absent when there are none.
   */
  keyVariables?: string[];
  /**
   * The keys of `models` that only a project's files set (none of the person's did): each
   * describes a model (its window, prices) but never decides which provider, and so which key
   * and server, a model goes to (`describeOnly` in src/llm/catalog.ts). Absent when there are none.
   */
  projectModels?: string[];
  /**
   * The project file (`.tern/config.jsonc` or `.env`) that chose the model's server, by its
   * `baseUrl` or `provider`; absent when the person chose it (or nobody did). Such a server gets
   * none of the person's keys from the environment, and nothing of theirs from tern's home:
   * neither their context and prompt files, skills and `memory.md`, nor their facts for every
   * workspace.
   */
  serverChosenBy?: ConfigSource;
  /**
   * The model the person's own layers give (their file, environment, flags, or the default,
   * then `explicit` false) when a project's file chose `model`: the AUTO reviewer's when the
   * person set no `reviewModel`, so that a repository never chooses who reviews its model's
   * calls (a weaker model, easier to steer). Absent when the project did not choose the model.
   */
  ownModel?: { model: string; explicit: boolean };
};

/** The names of the limits, in a fixed order. */
export const LIMIT_NAMES: readonly (keyof ResourceLimits)[] = [
  "processes",
  "memoryMb",
  "totalMemoryMb",
  "cpuSeconds",
  "fileSizeMb",
  "tmpMb",
  "toolSeconds",
];

/** Thinking levels, as a config value. */
export type ThinkingChoice = TernConfig["thinking"];

/** Review modes: ASK a person, AUTO a reviewer model, BYPASS no review. */
export type ReviewMode = TernConfig["mode"];

/** The rule of each key of the settings table. */
export const RULES = Object.fromEntries(
  SETTING_KEYS.map((key) => [key, settingOf(key).rule]),
) as { readonly [K in SettingKey]: (typeof SETTINGS)[K]["rule"] };

/** Keys holding structures, validated by the zod schema of config files only. */
export const STRUCTURED_KEYS: readonly SettingKey[] = SETTING_KEYS.filter((key) =>
  settingOf(key).rule.kind === "structured"
);

/** Validates and normalises one value of `key` (strings trimmed, URLs without a trailing slash). */
export function checkSetting(
  key: SettingKey,
  value: unknown,
): { ok: true; value: SettingValue } | { ok: false } {
  return checkRule(settingOf(key).rule, value);
}

/** Variables holding the API key, in priority order within one layer. */
export const API_KEY_VARIABLES = ["TERN_API_KEY", "OPENAI_API_KEY"] as const;

/** Key variables collected into `apiKeys` besides every `apiKeyEnv`: the presets' own. */
export const KNOWN_KEY_VARIABLES = [
  "TERN_API_KEY",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENROUTER_API_KEY",
  "VLLM_API_KEY",
] as const;

const SECRET_NAMES = new Set(["key", "token", "accesstoken", "authtoken", "secret", "password"]);

/**
 * True for key names that look like they hold a credential (`apiKey`, `OPENAI_API_KEY`,
 * `token`, ...). Config files are often committed, so such keys get their own error.
 */
export function isSecretKeyName(name: string): boolean {
  const folded = name.toLowerCase().replace(/[^a-z]/g, "");
  if (folded === "apikeyenv") return false;
  return folded.includes("apikey") || SECRET_NAMES.has(folded);
}
