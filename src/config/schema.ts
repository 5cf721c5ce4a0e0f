/**
 * The shape of tern's configuration: the resolved `TernConfig`, the rules each key follows, the
 * built-in defaults and the environment variables that map onto keys.
 */
/** The resolved configuration every part of tern reads. Print it with `describeConfig()`. */
export interface TernConfig {
  /** Model name sent to the provider. */
  model: string;
  /** Provider base URL, http or https, without a trailing slash. */
  baseUrl: string;
  /** Never printed: `describeConfig()` shows only whether it is set and where it came from. */
  apiKey?: string;
  /** Maximum model rounds in one turn (1 to 1000). */
  maxRounds: number;
  /** Maximum output tokens per model request; unset lets the provider decide. */
  maxTokens?: number;
  /** Sampling temperature from 0 to 2; unset lets the provider decide. */
  temperature?: number;
  /** Whole-request timeout for a model call, in milliseconds. */
  requestTimeoutMs: number;
  /** Longest silence allowed in a streamed response, in milliseconds. */
  idleTimeoutMs: number;
  /** Default timeout for one shell command, in milliseconds. */
  bashTimeoutMs: number;
  /** Absolute path of the user's tern directory (`TERN_HOME`, else `~/.tern`). */
  ternHome: string;
  /** Sandbox profile: a built-in (`:workspace`, ...) or a name from `profiles`. */
  profile: string;
  /** Who approves a call the profile and rules leave open: a person, a reviewer model, nobody. */
  mode: ReviewMode;
  /** Run tools with no sandbox at all (no worker confinement, no bubblewrap). Review still applies. */
  noSandbox: boolean;
  /** Model for the AUTO reviewer; unset means the main model. */
  reviewModel?: string;
  /** Longest an AUTO review may take before it counts as a denial, in milliseconds. */
  reviewTimeoutMs: number;
  /** Custom sandbox profiles by name (config files only). */
  profiles: Record<string, CustomProfile>;
  /**
   * The limits of each shell command (config files only): the person's config may raise or
   * lower them, a project's only lower them. Default {@linkcode DEFAULT_LIMITS}.
   */
  limits: ResourceLimits;
  /** Allow/ask/deny rules, user config first, then the project's (config files only). */
  rules: PermissionRule[];
  /** What shell commands may see (the person's own config file only, never a project's). */
  sandbox: SandboxSettings;
  /** The model's context window in tokens; the budget compaction keeps the request under. */
  contextWindow: number;
  /** Compact before a model call once the request is over this fraction of the window. */
  compactAt: number;
  /** A tool result longer than this (characters) is saved to a file and previewed. */
  toolResultChars: number;
  /**
   * The provider to use: a name from `providers`, a preset (`openai`, `anthropic`, `ollama`,
   * …) or an API style (`openai`, `openai-responses`, `anthropic`). Unset: the model's
   * provider in the catalog, else an OpenAI-compatible API at `baseUrl`.
   */
  provider?: string;
  /** How hard thinking models think; models without thinking get nothing. */
  thinking: ThinkingChoice;
  /** Retries of one provider/model on 429, 5xx and dropped connections before it fails. */
  maxRetries: number;
  /** The first retry's backoff in milliseconds; doubled each time, with jitter. */
  retryBaseMs: number;
  /** `provider/model` pairs tried in order when the main one keeps failing. */
  fallback: string[];
  /** Plan nodes run at once by `tern plan` (each a ReAct worker). */
  planConcurrency: number;
  /** Providers defined or adjusted in config files (trusted layers only). */
  providers: Record<string, ProviderSettings>;
  /** Model catalog overrides and additions, by `model` or `provider/model`. */
  models: Record<string, ModelSettings>;
  /**
   * Values of the key variables tern knows of (`TERN_API_KEY`, `OPENAI_API_KEY`,
   * `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY` and every `apiKeyEnv`), by variable name, from
   * the environment or `.env`. Never printed; each key goes only to its own provider.
   */
  apiKeys: Record<string, string>;
}

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

/**
 * The default limits: 1,024 processes, 8 GiB of memory per process, 30 CPU minutes per process,
 * 1 GiB per file, a 1 GiB `/tmp`, and 2 minutes per file tool call.
 */
export const DEFAULT_LIMITS: Readonly<ResourceLimits> = {
  processes: 1024,
  memoryMb: 8192,
  cpuSeconds: 1800,
  fileSizeMb: 1024,
  tmpMb: 1024,
  toolSeconds: 120,
};

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
export type ThinkingChoice = "off" | "low" | "medium" | "high";

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
export type ReviewMode = "ask" | "auto" | "bypass";

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

/** Settings the command line may override, already parsed by the CLI. */
export type ConfigFlags = Partial<
  Pick<
    TernConfig,
    | "model"
    | "baseUrl"
    | "maxRounds"
    | "maxTokens"
    | "temperature"
    | "profile"
    | "mode"
    | "noSandbox"
    | "provider"
    | "thinking"
    | "fallback"
  >
>;

/** Built-in defaults, the lowest layer. `maxTokens` and `temperature` are unset. */
export const DEFAULTS = {
  model: "gpt-4.1-mini",
  baseUrl: "https://api.openai.com/v1",
  maxRounds: 25,
  requestTimeoutMs: 600_000,
  idleTimeoutMs: 120_000,
  bashTimeoutMs: 120_000,
  profile: ":workspace",
  mode: "ask",
  noSandbox: false,
  reviewTimeoutMs: 30_000,
  contextWindow: 128_000,
  compactAt: 0.8,
  toolResultChars: 30_000,
  thinking: "medium",
  maxRetries: 4,
  retryBaseMs: 500,
  planConcurrency: 2,
} as const satisfies Partial<TernConfig>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}

/**
 * What each key accepts. One table drives both validators: `checkSetting()` for environment
 * variables and flags (no zod, so a run without config files never loads it: zod 4 costs
 * 40–70 ms of start-up here) and the zod schema for config files in `file_schema.ts`.
 */
export type Rule =
  | { kind: "text" }
  | { kind: "url" }
  | { kind: "envName" }
  | { kind: "integer"; min: number; max?: number }
  | { kind: "number"; min: number; max: number }
  | { kind: "choice"; values: readonly string[] }
  | { kind: "boolean" }
  /** A list of non-empty strings; as text (environment, flags) comma-separated. */
  | { kind: "list" };

export const RULES = {
  model: { kind: "text" },
  baseUrl: { kind: "url" },
  apiKeyEnv: { kind: "envName" },
  maxRounds: { kind: "integer", min: 1, max: 1000 },
  maxTokens: { kind: "integer", min: 1 },
  temperature: { kind: "number", min: 0, max: 2 },
  requestTimeoutMs: { kind: "integer", min: 1 },
  idleTimeoutMs: { kind: "integer", min: 1 },
  bashTimeoutMs: { kind: "integer", min: 1 },
  profile: { kind: "text" },
  mode: { kind: "choice", values: ["ask", "auto", "bypass"] },
  noSandbox: { kind: "boolean" },
  reviewModel: { kind: "text" },
  reviewTimeoutMs: { kind: "integer", min: 1 },
  contextWindow: { kind: "integer", min: 4_000 },
  compactAt: { kind: "number", min: 0.1, max: 0.95 },
  toolResultChars: { kind: "integer", min: 2_000 },
  provider: { kind: "text" },
  thinking: { kind: "choice", values: ["off", "low", "medium", "high"] },
  maxRetries: { kind: "integer", min: 0, max: 10 },
  retryBaseMs: { kind: "integer", min: 1 },
  fallback: { kind: "list" },
  planConcurrency: { kind: "integer", min: 1, max: 16 },
} as const satisfies Record<string, Rule>;

/** A key a config file may set. */
export type SettingKey = keyof typeof RULES;

/** The settings one layer contributes, already validated. */
export interface Settings {
  model?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  maxRounds?: number;
  maxTokens?: number;
  temperature?: number;
  requestTimeoutMs?: number;
  idleTimeoutMs?: number;
  bashTimeoutMs?: number;
  profile?: string;
  mode?: ReviewMode;
  noSandbox?: boolean;
  reviewModel?: string;
  reviewTimeoutMs?: number;
  contextWindow?: number;
  compactAt?: number;
  toolResultChars?: number;
  provider?: string;
  thinking?: ThinkingChoice;
  maxRetries?: number;
  retryBaseMs?: number;
  fallback?: string[];
  planConcurrency?: number;
  profiles?: Record<string, CustomProfile>;
  limits?: Partial<ResourceLimits>;
  rules?: PermissionRule[];
  providers?: Record<string, ProviderSettings>;
  models?: Record<string, ModelSettings>;
  sandbox?: SandboxSettings;
}

/** Keys of a config file that hold structures, validated by the zod schema only. */
export const STRUCTURED_KEYS = [
  "profiles",
  "limits",
  "rules",
  "providers",
  "models",
  "sandbox",
] as const;

/** Validates and normalises one value (strings trimmed, URLs without a trailing slash). */
export function checkSetting(
  key: SettingKey,
  value: unknown,
): { ok: true; value: SettingValue } | { ok: false } {
  return checkRule(RULES[key], value);
}

/** A checked scalar (or list) setting. */
export type SettingValue = string | number | boolean | string[];

/** Validates `value` against `rule`; shared with the zod schema for files. */
export function checkRule(
  rule: Rule,
  value: unknown,
): { ok: true; value: SettingValue } | { ok: false } {
  switch (rule.kind) {
    case "list": {
      const items = typeof value === "string"
        ? value.split(",")
        : Array.isArray(value) && value.every((item) => typeof item === "string")
        ? value
        : undefined;
      if (items === undefined) return { ok: false };
      const trimmed = items.map((item) => item.trim());
      return trimmed.includes("") && typeof value !== "string"
        ? { ok: false }
        : { ok: true, value: trimmed.filter((item) => item !== "") };
    }
    case "choice":
      return typeof value === "string" && rule.values.includes(value.trim())
        ? { ok: true, value: value.trim() }
        : { ok: false };
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : { ok: false };
    case "text":
    case "url":
    case "envName": {
      if (typeof value !== "string") return { ok: false };
      const text = value.trim();
      if (rule.kind === "text") return text === "" ? { ok: false } : { ok: true, value: text };
      if (rule.kind === "envName") {
        return ENV_NAME.test(value) ? { ok: true, value } : { ok: false };
      }
      return isHttpUrl(text) ? { ok: true, value: text.replace(/\/+$/, "") } : { ok: false };
    }
    case "integer":
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) return { ok: false };
      if (rule.kind === "integer" && !Number.isSafeInteger(value)) return { ok: false };
      if (value < rule.min || (rule.max !== undefined && value > rule.max)) return { ok: false };
      return { ok: true, value };
    }
  }
}

/** What each key accepts, as it reads after "expected" in an error message. */
export const expectations: Record<SettingKey, string> = {
  model: "a non-empty string",
  baseUrl: "an http or https URL",
  apiKeyEnv: "the name of an environment variable that holds the key (not the key itself)",
  maxRounds: "an integer from 1 to 1000",
  maxTokens: "a positive integer",
  temperature: "a number from 0 to 2",
  requestTimeoutMs: "a positive integer (milliseconds)",
  idleTimeoutMs: "a positive integer (milliseconds)",
  bashTimeoutMs: "a positive integer (milliseconds)",
  profile: 'a sandbox profile name (":read-only", ":workspace", ":external", ' +
    '":danger-full-access" or one of "profiles")',
  mode: '"ask", "auto" or "bypass"',
  noSandbox: "true or false (in the environment: 1, 0, true, false, yes or no)",
  reviewModel: "a non-empty string",
  reviewTimeoutMs: "a positive integer (milliseconds)",
  contextWindow: "an integer of at least 4000 (tokens)",
  compactAt: "a number from 0.1 to 0.95 (a fraction of the context window)",
  toolResultChars: "an integer of at least 2000 (characters)",
  provider: 'a provider name (from "providers", a preset such as "anthropic" or "ollama", ' +
    'or an API style: "openai", "openai-responses", "anthropic")',
  thinking: '"off", "low", "medium" or "high"',
  maxRetries: "an integer from 0 to 10",
  retryBaseMs: "a positive integer (milliseconds)",
  fallback: 'a list of "provider/model" pairs (comma-separated in the environment)',
  planConcurrency: "an integer from 1 to 16 (plan nodes run at once)",
};

/** Keys whose rejected values must not be echoed, because they may hold a secret. */
export const secretKeys: ReadonlySet<SettingKey> = new Set(["apiKeyEnv"]);

/** Keys whose environment variables hold numbers. */
export const numericKeys: ReadonlySet<SettingKey> = new Set(
  (Object.keys(RULES) as SettingKey[]).filter((key) => {
    const kind = RULES[key].kind;
    return kind === "integer" || kind === "number";
  }),
);

/**
 * Environment variables that set a key, in priority order within one layer: a `TERN_` variable
 * beats its `OPENAI_` fallback. The API key is resolved separately (see `API_KEY_VARIABLES`).
 */
export const ENV_VARIABLES: ReadonlyArray<{ key: SettingKey; names: readonly string[] }> = [
  { key: "model", names: ["TERN_MODEL"] },
  { key: "baseUrl", names: ["TERN_BASE_URL", "OPENAI_BASE_URL"] },
  { key: "maxRounds", names: ["TERN_MAX_ROUNDS"] },
  { key: "maxTokens", names: ["TERN_MAX_TOKENS"] },
  { key: "temperature", names: ["TERN_TEMPERATURE"] },
  { key: "requestTimeoutMs", names: ["TERN_REQUEST_TIMEOUT_MS"] },
  { key: "idleTimeoutMs", names: ["TERN_IDLE_TIMEOUT_MS"] },
  { key: "bashTimeoutMs", names: ["TERN_BASH_TIMEOUT_MS"] },
  { key: "profile", names: ["TERN_PROFILE"] },
  { key: "mode", names: ["TERN_MODE"] },
  { key: "noSandbox", names: ["TERN_NO_SANDBOX"] },
  { key: "reviewModel", names: ["TERN_REVIEW_MODEL"] },
  { key: "reviewTimeoutMs", names: ["TERN_REVIEW_TIMEOUT_MS"] },
  { key: "contextWindow", names: ["TERN_CONTEXT_WINDOW"] },
  { key: "compactAt", names: ["TERN_COMPACT_AT"] },
  { key: "toolResultChars", names: ["TERN_TOOL_RESULT_CHARS"] },
  { key: "provider", names: ["TERN_PROVIDER"] },
  { key: "thinking", names: ["TERN_THINKING"] },
  { key: "maxRetries", names: ["TERN_MAX_RETRIES"] },
  { key: "retryBaseMs", names: ["TERN_RETRY_BASE_MS"] },
  { key: "fallback", names: ["TERN_FALLBACK"] },
  { key: "planConcurrency", names: ["TERN_PLAN_CONCURRENCY"] },
];

/**
 * Settings a project (its `.tern/config.jsonc` or `.env`, which arrive with a cloned
 * repository) may not loosen: a checked-in file must not switch off review or the sandbox.
 */
export const TRUSTED_ONLY_KEYS: ReadonlySet<string> = new Set([
  "mode",
  "noSandbox",
  "profiles",
  "reviewModel",
]);

/**
 * Settings only the person's own config file may set: they widen what sandboxed commands see
 * (`sandbox.homeAllow`), so neither a project's files nor a variable a project's `.env` could
 * imitate may.
 */
export const USER_FILE_ONLY_KEYS: ReadonlySet<string> = new Set(["sandbox"]);

/**
 * Settings a project may not set because they decide where API keys are sent: a checked-in
 * file must not point a provider (and with it the person's key) at another server.
 */
export const KEY_ROUTING_KEYS: ReadonlySet<string> = new Set([
  "providers",
  "apiKeyEnv",
  "fallback",
]);

/** Profiles a project may choose; anything wider needs the user's config, env or a flag. */
export const PROJECT_PROFILES: ReadonlySet<string> = new Set([":read-only", ":workspace"]);

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
