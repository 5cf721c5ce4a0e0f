/**
 * loadConfig(): merges the six configuration layers, later wins:
 * defaults < user `config.jsonc` < project `.tern/config.jsonc` < `.env` < environment < flags.
 */
import { join, resolve } from "node:path";
import { readOptionalText } from "./_read_file.ts";
import { readWorkspaceText, type Warn } from "./workspace_file.ts";
import {
  type Dotenv,
  type Layer,
  nonEmpty,
  readDotenv,
  settingsFromVariables,
  type Variables,
} from "./env.ts";
import { ConfigError, formatValue } from "./errors.ts";
import {
  API_KEY_VARIABLES,
  checkSetting,
  type ConfigFlags,
  type CustomProfile,
  DEFAULT_LIMITS,
  DEFAULTS,
  expectations,
  KEY_ROUTING_KEYS,
  KNOWN_KEY_VARIABLES,
  LIMIT_NAMES,
  type ModelSettings,
  type PermissionRule,
  PROJECT_PROFILES,
  type ProviderSettings,
  type ResourceLimits,
  type SettingKey,
  type Settings,
  type TernConfig,
  TRUSTED_ONLY_KEYS,
  USER_FILE_ONLY_KEYS,
} from "./schema.ts";

/** Inputs of {@linkcode loadConfig}; everything ambient is passed in so tests stay hermetic. */
export interface LoadConfigOptions {
  /** Working directory: holds the project's `.tern/config.jsonc` and `.env`. */
  cwd: string;
  /** Process environment (default: `Deno.env.toObject()`); never modified. */
  env?: Variables;
  /** Command-line overrides, already parsed; undefined values are ignored. */
  flags?: ConfigFlags;
  /** Home directory (default: `HOME` from `env`); the user directory is `<home>/.tern`. */
  home?: string;
  /**
   * Told about a project file that is skipped (a symlink out of the workspace, a hard link, not
   * a regular file); default: a `tern: warning:` line on stderr.
   */
  warn?: Warn;
}

/** The resolved configuration and, per key, the layer that set it. */
export interface LoadedConfig {
  config: TernConfig;
  /**
   * Key → where its value came from (`default`, `user config /h/.tern/config.jsonc`,
   * `TERN_MODEL in the environment`, `command line`, ...). Never holds a value, so it is safe
   * to print; `apiKey` names the variable the key was read from.
   */
  sources: Record<string, string>;
}

/** How `sources` names the project's config file: `project config <file>`. */
const PROJECT_LABEL = "project config";

const FLAG_KEYS = [
  "model",
  "baseUrl",
  "maxRounds",
  "maxTokens",
  "temperature",
  "profile",
  "mode",
  "noSandbox",
  "provider",
  "thinking",
  "fallback",
] as const;

/**
 * Loads and merges tern's configuration. Missing files are skipped; the file parser loads only
 * when a config file exists, and jsonc-parser and zod only for a file that is more than plain
 * settings (see `parsePlainConfig`). The API key comes only from the environment or `.env`:
 * `TERN_API_KEY`, then the variable named by `apiKeyEnv`, then `OPENAI_API_KEY`, each looked up
 * in the real environment before `.env`.
 * @throws {ConfigError} (exit code 2) for an unreadable or invalid file, variable or flag.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const env = options.env ?? processEnvironment();
  const cwd = resolve(options.cwd);
  const home = resolveTernHome({ cwd, env, home: options.home });
  const userFile = join(home.path, "config.jsonc");
  const projectFile = join(cwd, ".tern", "config.jsonc");

  const layers: Layer[] = [defaultsLayer()];
  const projectLayers = new Set<Layer>();
  layers.push(await fileLayer(userFile, "user config", readOptionalText(userFile, "config file")));
  // With cwd = home and no TERN_HOME both paths are the same file: read it once, as the user's.
  if (projectFile !== userFile) {
    const text = readWorkspaceText(cwd, projectFile, { what: "config file", warn: options.warn });
    layers.push(
      checkProjectLayer(await fileLayer(projectFile, "project config", text), projectFile),
    );
    projectLayers.add(layers.at(-1)!);
  }
  const dotenv = await readDotenv(cwd, join(cwd, ".env"), options.warn);
  if (dotenv) {
    layers.push(checkProjectLayer(settingsFromVariables(dotenv.variables, dotenv), dotenv.file));
  }
  layers.push(settingsFromVariables(env));
  layers.push(flagsLayer(options.flags ?? {}));

  const merged: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  const profiles: Record<string, CustomProfile> = {};
  const rules: PermissionRule[] = [];
  const providers: Record<string, ProviderSettings> = {};
  const models: Record<string, ModelSettings> = {};
  const limits: ResourceLimits = { ...DEFAULT_LIMITS };
  const sandbox: TernConfig["sandbox"] = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.settings)) {
      if (value === undefined) continue;
      // Profiles merge by name; rules add up (a later layer cannot drop an earlier deny).
      if (key === "profiles") Object.assign(profiles, value);
      // A project's file may lower a limit, never raise one.
      else if (key === "limits") mergeLimits(limits, value, projectLayers.has(layer));
      else if (key === "rules") rules.push(...(value as PermissionRule[]));
      // Providers and models merge field by field: a project may adjust a user's model.
      else if (key === "providers") mergeByName(providers, value);
      else if (key === "models") mergeByName(models, value);
      else if (key === "sandbox") Object.assign(sandbox, value);
      else merged[key] = value;
      sources[key] = layer.sources[key as SettingKey] ?? "unknown";
    }
  }
  const settings = merged as unknown as Settings & Pick<TernConfig, keyof typeof DEFAULTS>;
  const config: TernConfig = {
    model: settings.model,
    baseUrl: settings.baseUrl,
    maxRounds: settings.maxRounds,
    requestTimeoutMs: settings.requestTimeoutMs,
    idleTimeoutMs: settings.idleTimeoutMs,
    bashTimeoutMs: settings.bashTimeoutMs,
    ternHome: home.path,
    profile: settings.profile,
    mode: settings.mode,
    noSandbox: settings.noSandbox,
    reviewTimeoutMs: settings.reviewTimeoutMs,
    contextWindow: settings.contextWindow,
    compactAt: settings.compactAt,
    toolResultChars: settings.toolResultChars,
    thinking: settings.thinking,
    maxRetries: settings.maxRetries,
    retryBaseMs: settings.retryBaseMs,
    fallback: settings.fallback ?? [],
    planConcurrency: settings.planConcurrency,
    profiles,
    limits,
    rules,
    providers,
    models,
    sandbox,
    apiKeys: {},
  };
  if (settings.provider !== undefined) config.provider = settings.provider;
  if (settings.reviewModel !== undefined) config.reviewModel = settings.reviewModel;
  if (settings.maxTokens !== undefined) config.maxTokens = settings.maxTokens;
  if (settings.temperature !== undefined) config.temperature = settings.temperature;
  sources.ternHome = home.source;

  if (options.env === undefined && settings.apiKeyEnv !== undefined) {
    checkReadable(settings.apiKeyEnv, sources.apiKeyEnv);
  }
  // A base URL or provider from the project's files is the repository's choice: only keys
  // from that same `.env` may go there, never the person's own keys from the environment.
  const chooser = [sources.baseUrl, sources.provider].find((source) => isProjectSource(source));
  const keyEnv = chooser === undefined ? env : {};
  const withheld = chooser === undefined ? undefined : withheldNote(env, chooser);
  if (withheld) sources.apiKey = withheld;
  const apiKey = resolveApiKey(keyEnv, dotenv, settings.apiKeyEnv);
  if (apiKey) {
    config.apiKey = apiKey.value;
    sources.apiKey = apiKey.source;
  }
  config.apiKeys = collectKeys(keyEnv, dotenv, [
    ...KNOWN_KEY_VARIABLES,
    ...(settings.apiKeyEnv ? [settings.apiKeyEnv] : []),
    ...Object.values(providers).flatMap((provider) => provider.apiKeyEnv ?? []),
  ]);
  return { config, sources };
}

/**
 * Whether `source` (a `sources` value of {@linkcode loadConfig}) is one of the project's files:
 * its `.tern/config.jsonc` (`project config <file>`) or its `.env` (`TERN_MODEL in <file>`).
 */
export function isProjectSource(source: string | undefined): boolean {
  if (source === undefined) return false;
  return source.startsWith(`${PROJECT_LABEL} `) || /^[A-Za-z_][A-Za-z0-9_]* in \//.test(source);
}

/** Why no key from the environment is used with a project's base URL (for `tern config`). */
function withheldNote(env: Variables, chooser: string): string | undefined {
  const held = KNOWN_KEY_VARIABLES.filter((name) => nonEmpty(env[name]) !== undefined);
  if (held.length === 0) return undefined;
  return `${held.join(", ")} in the environment not used: the server is chosen by ` +
    `${chooser}, and a server a project chooses gets only keys from the project's .env`;
}

function mergeByName<T extends object>(into: Record<string, T>, value: unknown): void {
  for (const [name, entry] of Object.entries(value as Record<string, T>)) {
    into[name] = { ...into[name], ...entry };
  }
}

/**
 * The values of key variables, by name: the real environment first, then `.env`. A name
 * tern's process may not read (see READABLE_PREFIXES) counts as unset.
 */
function collectKeys(
  env: Variables,
  dotenv: Dotenv | undefined,
  names: readonly string[],
): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const name of new Set(names)) {
    const value = nonEmpty(env[name]) ?? nonEmpty(dotenv?.variables[name]);
    if (value !== undefined) keys[name] = value;
  }
  return keys;
}

/** Variable-name prefixes tern's process may read (bin/_env.sh grants them). */
export const READABLE_PREFIXES = [
  "TERN_",
  "OPENAI_",
  "ANTHROPIC_",
  "OPENROUTER_",
  "VLLM_API_KEY",
] as const;

function checkReadable(name: string, source: string | undefined): void {
  const state = Deno.permissions.querySync({ name: "env", variable: name }).state;
  if (state === "granted") return;
  throw new ConfigError(
    `Cannot read the API key variable ${name} named by "apiKeyEnv"${
      source ? ` (${source})` : ""
    }: tern's process may read only variables starting with ${
      READABLE_PREFIXES.join(", ")
    }; put the key in TERN_API_KEY or name a variable with one of those prefixes`,
    { key: "apiKeyEnv" },
  );
}

/**
 * This process's environment as `Variables`, read one name at a time. tern's process may read
 * only the variables its launcher grants (`--allow-env` in bin/_env.sh), so the whole
 * environment cannot be listed; a name it may not read is treated as unset, except the
 * variable named by `apiKeyEnv`, which gets a clear error when it is not readable.
 */
export function processEnvironment(): Variables {
  return new Proxy({} as Variables, {
    get(_target, name) {
      if (typeof name !== "string") return undefined;
      try {
        return Deno.env.get(name);
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) return undefined;
        throw error;
      }
    },
  });
}

/**
 * The user's tern directory: `TERN_HOME` (relative to `cwd`) when set, else `<home>/.tern`
 * with `home` defaulting to `HOME` from `env`.
 * @throws {ConfigError} when neither `TERN_HOME` nor a home directory is known.
 */
export function resolveTernHome(
  options: { cwd: string; env: Variables; home?: string },
): { path: string; source: string } {
  const ternHome = nonEmpty(options.env.TERN_HOME);
  if (ternHome) {
    return { path: resolve(options.cwd, ternHome), source: "TERN_HOME in the environment" };
  }
  const home = options.home ?? nonEmpty(options.env.HOME);
  if (home === undefined) {
    throw new ConfigError("Cannot locate the tern directory: set HOME or TERN_HOME", {
      key: "TERN_HOME",
    });
  }
  return { path: join(resolve(options.cwd, home), ".tern"), source: "default (~/.tern)" };
}

function defaultsLayer(): Layer {
  const sources: Layer["sources"] = {};
  for (const key of Object.keys(DEFAULTS)) sources[key as SettingKey] = "default";
  return { settings: { ...DEFAULTS }, sources };
}

async function fileLayer(file: string, label: string, text: string | undefined): Promise<Layer> {
  if (text === undefined) return { settings: {}, sources: {} };
  // The parser and its checks load only for a file that exists.
  const { parseConfigFile } = await import("./jsonc_file.ts");
  const settings = await parseConfigFile(text, file);
  const sources: Layer["sources"] = {};
  for (const key of Object.keys(settings)) sources[key as SettingKey] = `${label} ${file}`;
  return { settings, sources };
}

/**
 * A project's config file and `.env` come with the repository, so they may tighten the sandbox
 * but never loosen it: no review mode, no opt-out, no custom profiles, no allow rules, and only
 * `:read-only` or `:workspace` as the profile.
 * @throws {ConfigError} naming the file and the key.
 */
function checkProjectLayer(layer: Layer, file: string): Layer {
  const refuse = (key: string, what: string, rule = "may only tighten the sandbox"): never => {
    throw new ConfigError(
      `Refusing "${key}" in "${file}": ${what}; a project's files ${rule}, so set it in ` +
        "your user config (~/.tern/config.jsonc), the environment or a flag",
      { file, key },
    );
  };
  for (const key of Object.keys(layer.settings)) {
    if (USER_FILE_ONLY_KEYS.has(key)) {
      refuse(key, "it widens what sandboxed commands see", "may not widen the sandbox");
    }
    if (TRUSTED_ONLY_KEYS.has(key)) refuse(key, "it would change who approves tool calls");
    if (KEY_ROUTING_KEYS.has(key)) {
      refuse(
        key,
        "it decides which server receives your API keys",
        "may not send your keys elsewhere",
      );
    }
  }
  const { profile, rules } = layer.settings;
  if (profile !== undefined && !PROJECT_PROFILES.has(profile)) {
    refuse("profile", `profile "${profile}" is wider than ":workspace"`);
  }
  if (rules?.some((rule) => rule.action === "allow")) {
    refuse("rules", "allow rules let calls skip review");
  }
  return layer;
}

/** Sets each limit of `value` in `limits`; from a project's file only those that lower it. */
function mergeLimits(limits: ResourceLimits, value: unknown, fromProject: boolean): void {
  const given = value as Partial<ResourceLimits>;
  for (const name of LIMIT_NAMES) {
    const limit = given[name];
    if (limit === undefined) continue;
    if (!fromProject || limit < limits[name]) limits[name] = limit;
  }
}

function flagsLayer(flags: ConfigFlags): Layer {
  const settings: Record<string, unknown> = {};
  const sources: Layer["sources"] = {};
  for (const key of FLAG_KEYS) {
    const value = flags[key];
    if (value === undefined) continue;
    const checked = checkSetting(key, value);
    if (!checked.ok) {
      const detail = `expected ${expectations[key]}, got ${formatValue(value)}`;
      throw new ConfigError(`Invalid command-line option "${key}": ${detail}`, { key });
    }
    settings[key] = checked.value;
    sources[key] = "command line";
  }
  return { settings: settings as Settings, sources };
}

function resolveApiKey(
  env: Variables,
  dotenv: Dotenv | undefined,
  apiKeyEnv: string | undefined,
): { value: string; source: string } | undefined {
  // A variable named by apiKeyEnv is that provider's own key: it beats the generic
  // OPENAI_API_KEY, so a global OpenAI key is never sent to another provider's endpoint.
  const [tern, openai] = API_KEY_VARIABLES;
  const names: Array<[string, string]> = [[tern, ""]];
  if (apiKeyEnv) names.push([apiKeyEnv, " (named by apiKeyEnv)"]);
  names.push([openai, ""]);
  const dotenvLabel = dotenv ? `in ${dotenv.file}` : "";
  const candidates: Array<[Variables | undefined, string, string]> = [
    ...names.map((
      [name, note],
    ): [Variables, string, string] => [env, name, `in the environment${note}`]),
    ...names.map(([name, note]): [Variables | undefined, string, string] => [
      dotenv?.variables,
      name,
      `${dotenvLabel}${note}`,
    ]),
  ];
  for (const [variables, name, where] of candidates) {
    const value = nonEmpty(variables?.[name]);
    if (value) return { value, source: `${name} ${where}` };
  }
  return undefined;
}
