/**
 * loadConfig(): merges the six configuration layers, later wins:
 * defaults < user `config.jsonc` < project `.tern/config.jsonc` < `.env` < environment < flags.
 */
import { join, resolve } from "../core/path.ts";
import { readOptionalText } from "./_read_file.ts";
import { readWorkspaceText, type Warn } from "./workspace_file.ts";
import { warnPerson } from "../core/warnings.ts";
import {
  type Dotenv,
  findAssignment,
  type Layer,
  mayReadVariable,
  nonEmpty,
  parseText,
  readDotenv,
  settingsFromVariables,
  unreadableVariableHint,
  type Variables,
  warnMisspeltVariables,
} from "./env.ts";
import { ConfigError, formatValue } from "./errors.ts";
import { checkTernHome, resolveTernHome } from "./tern_home.ts";
import {
  API_KEY_VARIABLES,
  type CustomProfile,
  KNOWN_KEY_VARIABLES,
  LIMIT_NAMES,
  type ModelSettings,
  type PermissionRule,
  type ProviderSettings,
  type ResourceLimits,
  type TernConfig,
} from "./schema.ts";
import {
  type ConfigFlags,
  DEFAULTS,
  FLAG_KEYS,
  SETTING_KEYS,
  type SettingKey,
  settingOf,
  type Settings,
} from "./settings.ts";
import {
  type ConfigSource,
  describeSource,
  isExplicitSource,
  isProjectSource,
  projectRefusal,
  type RefusalPlace,
} from "./sources.ts";

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
   * Key → where its value came from, as data (`{ layer: "project", file }`); print it with
   * `describeSource()`. Never holds a value; `apiKey` names the variable the key was read from.
   * `models.<key>.contextWindow` names the project file that set the window of a `models` row
   * of the person's that had none: connecting bounds it by the catalog's (src/harness/models.ts).
   */
  sources: Record<string, ConfigSource>;
  /**
   * The person's key variables set in the environment that were not used, because a project's
   * file chose the server (`chooser`); for `tern config`.
   */
  withheldKeys?: { variables: string[]; chooser: ConfigSource };
}

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
  const homeFolder = options.home ?? nonEmpty(env.HOME);
  checkTernHome(home, homeFolder === undefined ? undefined : resolve(cwd, homeFolder));
  const userFile = join(home.path, "config.jsonc");
  const projectFile = join(cwd, ".tern", "config.jsonc");

  const layers: Layer[] = [defaultsLayer()];
  const projectLayers = new Set<Layer>();
  layers.push(await fileLayer(userFile, "user", readOptionalText(userFile, "config file")));
  // With cwd = home and no TERN_HOME both paths are the same file: read it once, as the user's.
  if (projectFile !== userFile) {
    const text = readWorkspaceText(cwd, projectFile, { what: "config file", warn: options.warn });
    const layer = await fileLayer(projectFile, "project", text);
    layers.push(
      await checkProjectLayer(layer, projectFile, async (key) => {
        const { keyPosition } = await import("./jsonc_file.ts");
        return text === undefined ? undefined : await keyPosition(text, key);
      }),
    );
    projectLayers.add(layers.at(-1)!);
  }
  const dotenv = await readDotenv(cwd, join(cwd, ".env"), options.warn);
  if (dotenv) {
    await warnMisspeltVariables(dotenv, options.warn ?? warnPerson);
    const layer = settingsFromVariables(dotenv.variables, dotenv);
    layers.push(
      await checkProjectLayer(layer, dotenv.file, (key) => {
        const source = layer.sources[key];
        if (source?.layer !== "dotenv") return undefined;
        const position = findAssignment(dotenv.text, source.variable);
        return position && { ...position, variable: source.variable };
      }),
    );
    projectLayers.add(layers.at(-1)!);
  }
  layers.push(settingsFromVariables(env));
  layers.push(flagsLayer(options.flags ?? {}));

  const merged: Record<string, unknown> = {};
  const sources: Record<string, ConfigSource> = {};
  const profiles: Record<string, CustomProfile> = {};
  const rules: PermissionRule[] = [];
  const providers: Record<string, ProviderSettings> = {};
  const models: Record<string, ModelSettings> = {};
  // Which `models` keys the person's own layers set: a project's key may describe a model, but
  // only the person's may route one (TernConfig.projectModels).
  const personModels = new Set<string>();
  const limits: ResourceLimits = { ...DEFAULTS.limits };
  const sandbox: TernConfig["sandbox"] = {};
  // The model the person's own layers give (TernConfig.ownModel).
  let ownModel: { model: string; explicit: boolean } | undefined;
  for (const layer of layers) {
    const fromProject = projectLayers.has(layer);
    const model = layer.settings.model;
    if (!fromProject && typeof model === "string") {
      ownModel = { model, explicit: isExplicitSource(layer.sources.model) };
    }
    for (const [key, value] of Object.entries(layer.settings)) {
      if (value === undefined) continue;
      // Profiles merge by name; rules add up (a later layer cannot drop an earlier deny).
      if (key === "profiles") Object.assign(profiles, value);
      // A project's file may lower a limit, never raise one.
      else if (key === "limits") mergeLimits(limits, value, fromProject);
      // A project's rule says where it was written: its words are the repository's, not tern's.
      else if (key === "rules") rules.push(...projectRules(value, fromProject, layer));
      // Providers and models merge field by field: a project may adjust a user's model, but
      // not widen its limits.
      else if (key === "providers") mergeByName(providers, value);
      else if (key === "models") {
        const warn = options.warn ?? warnPerson;
        const from = layer.sources.models;
        const project = { personModels, from, kept: sources.models, warn, sources };
        mergeModels(models, value, fromProject ? project : personModels);
      } else if (key === "sandbox") Object.assign(sandbox, value);
      // A project's value for a key it may only narrow (maxRounds, thinking, the timeouts) never
      // widens what the person set narrower than the default; nor does its profile widen the
      // one the person chose (a custom one stays). The person is told which value was ignored.
      else if (
        keepsNarrower(key, merged[key], value, fromProject) ||
        keepsProfile(key, merged[key], value, fromProject)
      ) {
        tellIgnored(key as SettingKey, value, merged[key], {
          from: layer.sources[key as SettingKey],
          kept: sources[key],
          warn: options.warn ?? warnPerson,
        });
        continue;
      } else merged[key] = value;
      const source = layer.sources[key as SettingKey];
      if (source !== undefined) sources[key] = source;
    }
  }
  const { apiKeyEnv, ...resolved } = merged as Settings;
  const config = {
    ...resolved,
    profiles,
    limits,
    rules,
    providers,
    models,
    sandbox,
    ternHome: home.path,
    apiKeys: {},
  } as TernConfig;
  sources.ternHome = home.source;
  if (isProjectSource(sources.model) && ownModel !== undefined) config.ownModel = ownModel;
  const projectModels = Object.keys(models).filter((name) => !personModels.has(name));
  if (projectModels.length > 0) config.projectModels = projectModels;

  const named = namedKeyVariables(config, apiKeyEnv);
  if (options.env === undefined) checkReadable(named, sources);
  if (named.length > 0) config.keyVariables = [...new Set(named.map((key) => key.variable))];
  // A base URL or provider from the project's files is the repository's choice: only keys
  // from that same `.env` may go there, never the person's own keys from the environment, nor
  // anything of theirs from tern's home (TernConfig.serverChosenBy).
  const chooser = [sources.baseUrl, sources.provider].find((source) => isProjectSource(source));
  if (chooser !== undefined) config.serverChosenBy = chooser;
  const keyEnv = chooser === undefined ? env : {};
  const held = KNOWN_KEY_VARIABLES.filter((name) => nonEmpty(env[name]) !== undefined);
  const withheldKeys = chooser !== undefined && held.length > 0
    ? { variables: held, chooser }
    : undefined;
  const apiKey = resolveApiKey(keyEnv, dotenv, apiKeyEnv);
  if (apiKey) {
    config.apiKey = apiKey.value;
    sources.apiKey = apiKey.source;
  }
  config.apiKeys = collectKeys(keyEnv, dotenv, [
    ...KNOWN_KEY_VARIABLES,
    ...(apiKeyEnv ? [apiKeyEnv] : []),
    ...Object.values(providers).flatMap((provider) => provider.apiKeyEnv ?? []),
    ...(config.indexEmbeddings?.apiKeyEnv ? [config.indexEmbeddings.apiKeyEnv] : []),
  ]);
  hideEnvFilesHoldingKeys(config, cwd, dotenv, options.warn);
  return withheldKeys ? { config, sources, withheldKeys } : { config, sources };
}

/**
 * When a file of environment variables at the workspace's top (`.env`, `.env.local` and the
 * other `.env.*`, direnv's `.envrc`) holds a key tern holds (its model key or another it sends),
 * that file is hidden from every tool this run, by a deny rule of its own: masking finds a key
 * only as it is written, so a command could otherwise read it encoded (`base64 .envrc`) into the
 * conversation. A key counts wherever it appears in the file (`AUTH="Bearer <key>"`, `export
 * KEY=<key>`), as does a `.env` variable equal to it. The person is told once per file, with how
 * to give the file back to commands. (The deny rule also keeps it out of checkpoints.)
 */
function hideEnvFilesHoldingKeys(
  config: TernConfig,
  cwd: string,
  dotenv: Dotenv | undefined,
  warn: Warn | undefined,
): void {
  const keys = [config.apiKey, ...Object.values(config.apiKeys)]
    .filter((key): key is string => typeof key === "string" && key.trim() !== "")
    .map((key) => key.trim());
  if (keys.length === 0) return;
  const equal = new Set(keys);
  // Long enough that finding one inside other text is no accident.
  const contained = keys.filter((key) => key.length >= MIN_CONTAINED_KEY);
  const holds = (text: string) => contained.some((key) => text.includes(key));
  const tell = warn ?? warnPerson;
  if (dotenv !== undefined) {
    const names = Object.entries(dotenv.variables)
      .filter(([, value]) => value !== undefined && (equal.has(value.trim()) || holds(value)))
      .map(([name]) => name);
    if (names.length > 0 || holds(dotenv.text)) {
      hideEnvFile(config, ".env", names, tell);
    }
  }
  if (contained.length === 0) return;
  for (const name of otherEnvFiles(cwd)) {
    // Read as `.env` is (a regular file inside the workspace, one link, at most 1 MiB); one
    // refused or unreadable is left as it is, without a word (it is not tern's to read).
    let text: string | undefined;
    try {
      text = readWorkspaceText(cwd, join(cwd, name), { what: "env file", warn: () => {} });
    } catch {
      continue;
    }
    if (text !== undefined && holds(text)) hideEnvFile(config, name, [], tell);
  }
}

/** Shortest key looked for inside a file's text rather than as a whole value. */
const MIN_CONTAINED_KEY = 12;

/**
 * The names at `cwd`'s top of files of environment variables other than `.env`: `.envrc` and
 * `.env.<suffix>` (suffixes of letters, digits, `.`, `_` and `-` only, so a name is never read
 * as a pattern by the deny rule made of it). Sorted; none when the folder cannot be read.
 */
function otherEnvFiles(cwd: string): string[] {
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(cwd)) {
      if (entry.isDirectory) continue;
      if (entry.name === ".envrc" || /^\.env\.[A-Za-z0-9._-]+$/.test(entry.name)) {
        names.push(entry.name);
      }
    }
  } catch {
    return [];
  }
  return names.sort();
}

function hideEnvFile(config: TernConfig, name: string, variables: string[], warn: Warn): void {
  const which = variables.length > 0 ? ` (${variables.join(", ")})` : "";
  config.rules.push({
    action: "deny",
    path: name,
    reason: `${name} holds a key tern uses${which}`,
  });
  warn(
    `${name} holds a key tern uses${which}: commands and file tools cannot see ${name} ` +
      "in this run; to give it back to them, keep that key out of it (export it in your shell)",
  );
}

function mergeByName<T extends object>(into: Record<string, T>, value: unknown): void {
  for (const [name, entry] of Object.entries(value as Record<string, T>)) {
    into[name] = { ...into[name], ...entry };
  }
}

/** The fields of a `models` row a project's files may only narrow, never widen. */
const NARROW_MODEL_FIELDS = ["contextWindow", "maxOutputTokens"] as const;

/** Where a project's `models` layer came from, and the person's it may only narrow. */
interface ProjectModels {
  personModels: ReadonlySet<string>;
  from: ConfigSource | undefined;
  kept: ConfigSource | undefined;
  warn: Warn;
  sources: Record<string, ConfigSource>;
}

/**
 * `mergeByName()` for `models`. From a person's layer (`layer` a set) it notes the keys set;
 * from a project's, a key the person also set keeps the person's limits (`NARROW_MODEL_FIELDS`):
 * the project's value is used only when it is no more than the person's, and the person hears
 * of one ignored. A window where the person's row has none is recorded in `sources`
 * (`models.<key>.contextWindow`): only the catalog knows how wide the model's is.
 */
function mergeModels(
  into: Record<string, ModelSettings>,
  value: unknown,
  layer: Set<string> | ProjectModels,
): void {
  const rows = value as Record<string, ModelSettings>;
  if (layer instanceof Set) {
    mergeByName(into, rows);
    for (const name of Object.keys(rows)) layer.add(name);
    return;
  }
  for (const [name, row] of Object.entries(rows)) {
    const entry = { ...row };
    for (const field of layer.personModels.has(name) ? NARROW_MODEL_FIELDS : []) {
      const given = entry[field];
      const kept = into[name]?.[field];
      const key = `models.${name}.${field}`;
      if (given === undefined || (kept !== undefined && given <= kept)) continue;
      if (kept === undefined) {
        // Only the catalog knows the model's window and output limit: connecting bounds them
        // (ownLimits() in src/harness/models.ts).
        if (layer.from !== undefined) layer.sources[key] = layer.from;
        continue;
      }
      delete entry[field];
      tellIgnored(key, given, kept, { from: layer.from, kept: layer.kept, warn: layer.warn });
    }
    into[name] = { ...into[name], ...entry };
  }
}

/**
 * The values of key variables, by name: the real environment first, then `.env`. A name
 * tern's process may not read (see `mayReadVariable()`) counts as unset. `TERN_API_KEY` comes
 * from `.env` only while the environment holds none of the `names`: the main provider takes it
 * before its own variable (`resolveNamedProvider`), so a repository's `.env` would otherwise
 * send the person's conversation with their chosen provider under the repository's account
 * (whose owner may read its logs), with the person's own key for it unused.
 */
function collectKeys(
  env: Variables,
  dotenv: Dotenv | undefined,
  names: readonly string[],
): Record<string, string> {
  const keys: Record<string, string> = {};
  const envHoldsKey = names.some((name) => nonEmpty(env[name]) !== undefined);
  const [tern] = API_KEY_VARIABLES;
  for (const name of new Set(names)) {
    const fromDotenv = name === tern && envHoldsKey ? undefined : dotenv?.variables[name];
    const value = nonEmpty(env[name]) ?? nonEmpty(fromDotenv);
    if (value !== undefined) keys[name] = value;
  }
  return keys;
}

/**
 * Every variable the settings name as holding a key, with the key that names it:
 * `apiKeyEnv`, each provider's and `indexEmbeddings`' `apiKeyEnv`, `webSearch.keyEnv` and
 * `webFetch.readerKeyEnv`.
 */
function namedKeyVariables(
  config: TernConfig,
  apiKeyEnv: string | undefined,
): Array<{ variable: string; key: string; setting: SettingKey }> {
  const named: Array<{ variable: string; key: string; setting: SettingKey }> = [];
  if (apiKeyEnv) named.push({ variable: apiKeyEnv, key: "apiKeyEnv", setting: "apiKeyEnv" });
  for (const [name, provider] of Object.entries(config.providers)) {
    if (provider.apiKeyEnv) {
      const key = `providers.${name}.apiKeyEnv`;
      named.push({ variable: provider.apiKeyEnv, key, setting: "providers" });
    }
  }
  const embeddings = config.indexEmbeddings?.apiKeyEnv;
  if (embeddings) {
    const key = "indexEmbeddings.apiKeyEnv";
    named.push({ variable: embeddings, key, setting: "indexEmbeddings" });
  }
  for (const [name, variable] of Object.entries(config.webSearch?.keyEnv ?? {})) {
    if (variable) named.push({ variable, key: `webSearch.keyEnv.${name}`, setting: "webSearch" });
  }
  const reader = config.webFetch?.readerKeyEnv;
  if (reader) {
    named.push({ variable: reader, key: "webFetch.readerKeyEnv", setting: "webFetch" });
  }
  return named;
}

/**
 * Fails on the first key variable tern's process may not read: its key would count as unset
 * whatever the person exports, so the setting could never work, and the person learns it now
 * rather than when a provider or tool first wants the key.
 * @throws {ConfigError} naming the variable, the key, where it was set and how to allow it.
 */
function checkReadable(
  named: ReturnType<typeof namedKeyVariables>,
  sources: Record<string, ConfigSource>,
): void {
  for (const { variable, key, setting } of named) {
    if (mayReadVariable(variable)) continue;
    const source = sources[setting];
    // Named as variables are (capitals): anything else may be the key itself, never echoed.
    const shown = /^[A-Z_][A-Z0-9_]*$/.test(variable) ? variable : undefined;
    throw new ConfigError(
      `Cannot read the key variable ${shown ? `${shown} ` : ""}named by "${key}"${
        source ? ` (${describeSource(source)})` : ""
      }: ${unreadableVariableHint(shown)}, or name a variable starting with TERN_${
        shown ? "" : ` (the name is not shown: it is not in capitals, so it may be the key ` +
          "itself, which goes in the variable)"
      }`,
      { key, ...(source && "file" in source ? { file: source.file } : {}) },
    );
  }
}

/**
 * This process's environment as `Variables`, read one name at a time. tern's process may read
 * only the variables its launcher grants (`--allow-env` in bin/_env.sh), so the whole
 * environment cannot be listed; a name it may not read is treated as unset, except the key
 * variables the settings name, which get a clear error when they are not readable.
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

function defaultsLayer(): Layer {
  const sources: Layer["sources"] = {};
  for (const key of Object.keys(DEFAULTS)) sources[key as SettingKey] = { layer: "default" };
  return { settings: structuredClone(DEFAULTS) as Settings, sources };
}

async function fileLayer(
  file: string,
  layer: "user" | "project",
  text: string | undefined,
): Promise<Layer> {
  if (text === undefined) return { settings: {}, sources: {} };
  // The parser and its checks load only for a file that exists.
  const { parseConfigFile } = await import("./jsonc_file.ts");
  const source: ConfigSource = { layer, file };
  const settings = await parseConfigFile(text, file, layer);
  const sources: Layer["sources"] = {};
  for (const key of Object.keys(settings)) sources[key as SettingKey] = source;
  return { settings, sources };
}

/**
 * A project's config file and `.env` come with the repository: each key it sets must be one the
 * settings table lets a project set (`project`), with a value no wider than allowed. `placeOf`
 * finds where a refused key is written, for the message.
 * @throws {ConfigError} naming the file, the key and where it is written.
 */
async function checkProjectLayer(
  layer: Layer,
  file: string,
  placeOf: (key: SettingKey) => Promise<RefusalPlace | undefined> | RefusalPlace | undefined,
): Promise<Layer> {
  // Keys only the person may set first: they say more than a value that is too wide.
  const given = SETTING_KEYS.filter((key) => layer.settings[key] !== undefined);
  const personOnly = given.filter((key) => settingOf(key).project === false);
  for (const key of [...personOnly, ...given.filter((key) => !personOnly.includes(key))]) {
    if (projectRefusal(key, layer.settings[key], file) === undefined) continue;
    throw projectRefusal(key, layer.settings[key], file, await placeOf(key));
  }
  return layer;
}

/** `value` (a layer's rules), each of a project's layer marked with the file that holds it. */
function projectRules(value: unknown, fromProject: boolean, layer: Layer): PermissionRule[] {
  const rules = value as PermissionRule[];
  const source = layer.sources.rules;
  if (!fromProject) return rules;
  const from = source !== undefined && "file" in source ? source.file : "the project's config";
  return rules.map((rule) => ({ ...rule, from }));
}

/**
 * A project's value wider than the value so far, for a key a project may only narrow: a number
 * above it, or a choice later in the key's `order` (narrowest first).
 */
function keepsNarrower(
  key: string,
  current: unknown,
  value: unknown,
  fromProject: boolean,
): boolean {
  if (!fromProject || current === undefined) return false;
  const row = settingOf(key as SettingKey);
  if (row.project !== "narrower") return false;
  if (typeof current === "number" && typeof value === "number") return value > current;
  return row.order !== undefined && row.order.indexOf(value) > row.order.indexOf(current);
}

/**
 * Tells the person that a project's `value` for `key` was ignored, naming the file (and `.env`
 * variable) it came from and the value kept, with where that came from.
 */
function tellIgnored(
  key: string,
  value: unknown,
  kept: unknown,
  how: { from?: ConfigSource; kept?: ConfigSource; warn: Warn },
): void {
  const from = how.from === undefined ? "the project's files" : describeSource(how.from);
  const keptFrom = how.kept === undefined ? "" : ` (${describeSource(how.kept)})`;
  how.warn(
    `Ignoring "${key}" ${formatValue(value)} from ${from}: it is not narrower than ` +
      `${formatValue(kept)}${keptFrom}, and a project's files may only narrow it`,
  );
}

/** The built-in profiles, narrowest first: each allows all that the ones before it allow. */
const PROFILE_ORDER = [":read-only", ":workspace", ":external", ":danger-full-access"];

/**
 * A project's profile that is not narrower than the profile so far (the person's, or the
 * default): the person's stays. Only built-in profiles are ordered; a custom one the person
 * chose is kept whatever a project names, since tern cannot tell which of the two allows less.
 */
function keepsProfile(key: string, current: unknown, value: unknown, fromProject: boolean) {
  if (!fromProject || key !== "profile" || current === value) return false;
  const now = PROFILE_ORDER.indexOf(String(current));
  const next = PROFILE_ORDER.indexOf(String(value));
  return now === -1 || next === -1 || next > now;
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

/**
 * Checks the values of command-line options alone, as {@linkcode loadConfig} reads them, for a
 * front end that loads its config later (per session).
 * @throws {ConfigError} naming the option and what it takes.
 */
export function checkFlags(flags: ConfigFlags): void {
  flagsLayer(flags);
}

function flagsLayer(flags: ConfigFlags): Layer {
  const settings: Record<string, unknown> = {};
  const sources: Layer["sources"] = {};
  for (const key of FLAG_KEYS) {
    const value = flags[key];
    if (value === undefined) continue;
    const source: ConfigSource = { layer: "flag", flag: `--${settingOf(key).flag?.name}` };
    settings[key] = parseText(key, value, source);
    sources[key] = source;
  }
  return { settings: settings as Settings, sources };
}

function resolveApiKey(
  env: Variables,
  dotenv: Dotenv | undefined,
  apiKeyEnv: string | undefined,
): { value: string; source: ConfigSource } | undefined {
  // A variable named by apiKeyEnv is that provider's own key: it beats the generic
  // OPENAI_API_KEY, so a global OpenAI key is never sent to another provider's endpoint.
  const [tern, openai] = API_KEY_VARIABLES;
  const names = apiKeyEnv ? [tern, apiKeyEnv, openai] : [tern, openai];
  for (const name of names) {
    const value = nonEmpty(env[name]);
    if (value) return { value, source: { layer: "env", variable: name } };
  }
  for (const name of dotenv ? names : []) {
    const value = nonEmpty(dotenv?.variables[name]);
    if (value && dotenv) {
      return { value, source: { layer: "dotenv", file: dotenv.file, variable: name } };
    }
  }
  return undefined;
}
