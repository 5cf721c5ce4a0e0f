/**
 * The shape of tern's configuration: the resolved `TernConfig` and the structures its keys hold.
 * What each key accepts, its default, variables and flag are in the settings table
 * (`settings.ts`).
 */
import { checkRule, type SettingValue } from "./rules.ts";
import {
  type ResolvedSettings,
  SETTING_KEYS,
  type SettingKey,
  settingOf,
  SETTINGS,
} from "./settings.ts";

export { type Rule, type SettingValue } from "./rules.ts";
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
};

/** The resource limits of one shell command (the `limits` key of a config file). */
export interface ResourceLimits {
  /**
   * Processes and threads at once (RLIMIT_NPROC inside bubblewrap's user namespace, so counted
   * per sandbox; the kernel does not apply RLIMIT_NPROC to root, so as root a pids cgroup holds
   * each run's commands to it where one can be made).
   */
  processes: number;
  /** Memory one process may allocate (RLIMIT_DATA: heap and private writable mappings), MiB. */
  memoryMb: number;
  /** CPU time one process may use (RLIMIT_CPU), seconds. */
  cpuSeconds: number;
  /** Largest file a command may write (RLIMIT_FSIZE), MiB. */
  fileSizeMb: number;
  /** Size of the command's private `/tmp` (a tmpfs, fresh for each command), MiB. */
  tmpMb: number;
  /**
   * Longest a file tool call (read, grep, glob, …) may take in the tool worker, seconds; then
   * the worker is killed and replaced (a catastrophic regex cannot hang tern).
   */
  toolSeconds: number;
}

/** The names of the limits, in a fixed order. */
export const LIMIT_NAMES: readonly (keyof ResourceLimits)[] = [
  "processes",
  "memoryMb",
  "cpuSeconds",
  "fileSizeMb",
  "tmpMb",
  "toolSeconds",
];

/** Thinking levels, as a config value. */
export type ThinkingChoice = TernConfig["thinking"];

/** A provider in a config file: a new one, or changes to a preset of the same name. */
export interface ProviderSettings {
  /** The wire API: required for a new provider, inherited from a preset of the same name. */
  api?: "openai" | "openai-responses" | "anthropic";
  baseUrl?: string;
  /** The environment variable holding this provider's key (never the key itself). */
  apiKeyEnv?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The model used when this provider is chosen without `--model`. */
  defaultModel?: string;
}

/** Catalog facts about a model, each optional; see ModelInfo in src/llm/model_info.ts. */
export interface ModelSettings {
  contextWindow?: number;
  maxOutputTokens?: number;
  /** `none` says the model does not think. */
  reasoning?: "effort" | "budget" | "none";
  minimalEffort?: boolean;
  images?: boolean;
  tools?: boolean;
  /** USD per million tokens. */
  price?: { input: number; output: number; cachedInput?: number; cacheWrite?: number };
}

/** The `sandbox` key of a config file. */
export interface SandboxSettings {
  /**
   * More paths of the home folder shell commands may see (read-only), besides the built-in
   * allowlist: `~/x` or absolute. Only from the person's own config file.
   */
  homeAllow?: string[];
}

/** Review modes: ASK a person, AUTO a reviewer model, BYPASS no review. */
export type ReviewMode = TernConfig["mode"];

/**
 * A custom sandbox profile: lists mapped 1:1 to Deno's `--allow-*` flags. Paths may use
 * `<workspace>`, `<tmp>` and `~/`; relative paths are relative to the workspace; `"*"` alone
 * grants everything of that kind.
 */
export interface CustomProfile {
  read?: string[];
  write?: string[];
  net?: string[];
  run?: string[];
  env?: string[];
}

/**
 * A permission rule. `command` is a shell command prefix in words (`"git push"`, `"npm *"`
 * with `*` for any one word) and implies the bash tool; `path` is a glob relative to the
 * workspace for file tools; `tool` alone matches every call of that tool. `match` and
 * `notMatch` are examples (commands, paths or tool names) checked when the rules load.
 */
export interface PermissionRule {
  action: "allow" | "ask" | "deny";
  tool?: string;
  command?: string;
  path?: string;
  match?: string[];
  notMatch?: string[];
  reason?: string;
  /**
   * For `"tool": "request_permissions"` only: what the rule grants (allow) or refuses (deny).
   * An allow rule grants a request without review when it lists every path (or a folder
   * holding it), host, variable and command prefix asked for; it never grants running without
   * the sandbox. Paths may start with `~/` or `<workspace>`.
   */
  read?: string[];
  write?: string[];
  hosts?: string[];
  env?: string[];
  commands?: string[];
}

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
