/**
 * The shape of tern's configuration: the resolved `TernConfig`, the zod schema for config files,
 * the built-in defaults and the environment variables that map onto keys.
 */
import { z } from "zod";

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

const positiveInt = z.int().positive();

/** One zod schema per config key. */
export const fieldSchemas = {
  model: z.string().trim().min(1),
  baseUrl: z.string().trim().refine(isHttpUrl).transform((url) => url.replace(/\/+$/, "")),
  apiKeyEnv: z.string().regex(ENV_NAME),
  maxRounds: z.int().min(1).max(1000),
  maxTokens: positiveInt,
  temperature: z.number().min(0).max(2),
  requestTimeoutMs: positiveInt,
  idleTimeoutMs: positiveInt,
  bashTimeoutMs: positiveInt,
};

/** A key a config file may set. */
export type SettingKey = keyof typeof fieldSchemas;

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
export const numericKeys: ReadonlySet<SettingKey> = new Set([
  "maxRounds",
  "maxTokens",
  "temperature",
  "requestTimeoutMs",
  "idleTimeoutMs",
  "bashTimeoutMs",
]);

/** A config file (`config.jsonc`): every key optional, unknown keys rejected. */
export const configFileSchema = z.strictObject({
  model: fieldSchemas.model.optional(),
  baseUrl: fieldSchemas.baseUrl.optional(),
  apiKeyEnv: fieldSchemas.apiKeyEnv.optional(),
  maxRounds: fieldSchemas.maxRounds.optional(),
  maxTokens: fieldSchemas.maxTokens.optional(),
  temperature: fieldSchemas.temperature.optional(),
  requestTimeoutMs: fieldSchemas.requestTimeoutMs.optional(),
  idleTimeoutMs: fieldSchemas.idleTimeoutMs.optional(),
  bashTimeoutMs: fieldSchemas.bashTimeoutMs.optional(),
});

/** The settings one layer contributes, already validated. */
export type Settings = z.output<typeof configFileSchema>;

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
