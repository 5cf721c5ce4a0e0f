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
}

/** Settings the command line may override, already parsed by the CLI. */
export type ConfigFlags = Partial<
  Pick<TernConfig, "model" | "baseUrl" | "maxRounds" | "maxTokens" | "temperature">
>;

/** Built-in defaults, the lowest layer. `maxTokens` and `temperature` are unset. */
export const DEFAULTS = {
  model: "gpt-4.1-mini",
  baseUrl: "https://api.openai.com/v1",
  maxRounds: 25,
  requestTimeoutMs: 600_000,
  idleTimeoutMs: 120_000,
  bashTimeoutMs: 120_000,
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
  | { kind: "number"; min: number; max: number };

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
}

/** Validates and normalises one value (strings trimmed, URLs without a trailing slash). */
export function checkSetting(
  key: SettingKey,
  value: unknown,
): { ok: true; value: string | number } | { ok: false } {
  return checkRule(RULES[key], value);
}

/** Validates `value` against `rule`; shared with the zod schema for files. */
export function checkRule(
  rule: Rule,
  value: unknown,
): { ok: true; value: string | number } | { ok: false } {
  switch (rule.kind) {
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
];

/** Variables holding the API key, in priority order within one layer. */
export const API_KEY_VARIABLES = ["TERN_API_KEY", "OPENAI_API_KEY"] as const;

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
