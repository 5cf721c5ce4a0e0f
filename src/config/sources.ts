/**
 * Where a setting came from, as data: decisions (whose keys a server gets, whether a flag beats
 * a resumed session) read the layer, never a printed label; `describeSource()` is for people.
 */
import { shownUrl } from "../core/url_text.ts";
import { ConfigError, formatValue } from "./errors.ts";
import { type SettingKey, settingOf } from "./settings.ts";

/** The layer a value came from, with the file, variable or flag that set it. */
export type ConfigSource =
  | { layer: "default" }
  /** The person's own `config.jsonc`. */
  | { layer: "user"; file: string }
  /** The project's `.tern/config.jsonc`. */
  | { layer: "project"; file: string }
  /** The project's `.env`. */
  | { layer: "dotenv"; file: string; variable: string }
  /** The process environment. */
  | { layer: "env"; variable: string }
  /** The command line (`--model`), or the person's choice in a session (`/model`). */
  | { layer: "flag"; flag: string };

/** Whether `source` is one of the project's files (`.tern/config.jsonc` or `.env`). */
export function isProjectSource(source: ConfigSource | undefined): boolean {
  return source?.layer === "project" || source?.layer === "dotenv";
}

/** Whether the person set it on the command line (or chose it in the session). */
export function isFlagSource(source: ConfigSource | undefined): boolean {
  return source?.layer === "flag";
}

/**
 * Whether the value is not the built-in default: a layer set it, or the key has no default and
 * nothing set it (then nothing was chosen for the person either).
 */
export function isExplicitSource(source: ConfigSource | undefined): boolean {
  return source?.layer !== "default";
}

/**
 * The source for people: `default`, `user config "/h/.tern/config.jsonc"`,
 * `TERN_MODEL in "/w/.env"`, `TERN_MODEL in the environment`, `--model on the command line`.
 */
export function describeSource(source: ConfigSource): string {
  switch (source.layer) {
    case "default":
      return "default";
    case "user":
      return `user config "${source.file}"`;
    case "project":
      return `project config "${source.file}"`;
    case "dotenv":
      return `${source.variable} in "${source.file}"`;
    case "env":
      return `${source.variable} in the environment`;
    case "flag":
      return source.flag.startsWith("-") ? `${source.flag} on the command line` : source.flag;
  }
}

/** Where in a file a value was found (1-based). */
export interface Position {
  line: number;
  column?: number;
}

/**
 * The one error for a value that breaks its key's rule, from any layer: it names the source
 * (file and position, variable or flag), the key and what the key accepts, and quotes the value
 * unless the key may hold a secret (a URL without its credentials). `Invalid environment
 * variable TERN_MAX_ROUNDS: key "maxRounds": expected an integer from 1 to 1000, got "abc"`.
 */
export function invalidSetting(
  key: SettingKey,
  source: ConfigSource,
  value: unknown,
  position?: Position,
): ConfigError {
  const row = settingOf(key);
  // A URL is quoted without the credentials it may carry (`http://user:password@host`).
  const shown = row.rule.kind === "url" && typeof value === "string" ? shownUrl(value) : value;
  const got = row.secret ? "" : `, got ${formatValue(shown)}`;
  const at = position === undefined
    ? ""
    : `: line ${position.line}${
      position.column === undefined ? "" : `, column ${position.column}`
    }`;
  const [place, subject, errorKey] = placeOf(source, key);
  return new ConfigError(
    `Invalid ${place}${at}: ${subject}: expected ${row.expect}${got}`,
    { key: errorKey, ...("file" in source ? { file: source.file } : {}), ...position },
  );
}

function placeOf(source: ConfigSource, key: SettingKey): [string, string, string] {
  const subject = `key "${key}"`;
  switch (source.layer) {
    case "user":
    case "project":
      return [`config file "${source.file}"`, subject, key];
    case "dotenv":
      return [`.env file "${source.file}"`, `${source.variable} (${subject})`, source.variable];
    case "env":
      return [`environment variable ${source.variable}`, subject, source.variable];
    case "flag":
      return [`command-line option ${source.flag}`, subject, key];
    case "default":
      return ["default", subject, key];
  }
}

const GUARD_REASONS = {
  review: ["it would change who approves tool calls", "may only tighten the sandbox"],
  sandbox: ["it widens what sandboxed commands see", "may not widen the sandbox"],
  keys: ["it decides which server receives your API keys", "may not send your keys elsewhere"],
  ranking: ["it decides which code the agent's searches put first", "may not reorder them"],
  checkpoints: ["it decides what a rewind can bring back", "may not decide what checkpoints take"],
} as const;

/** Where a refused key is written in a project's file: its position, and the `.env` variable. */
export interface RefusalPlace extends Position {
  variable?: string;
}

/**
 * Why a project's file may not give `key` this `value` (see `project` in the settings table),
 * or undefined when it may. Decided by the table alone; `place` (where the key is written) only
 * adds to the message.
 */
export function projectRefusal(
  key: SettingKey,
  value: unknown,
  file: string,
  place?: RefusalPlace,
): ConfigError | undefined {
  const row = settingOf(key);
  let what: string;
  let rule = "may only narrow what tern does";
  if (row.project === false) {
    [what, rule] = GUARD_REASONS[row.guards ?? "review"];
  } else if (row.project === "narrower" && row.narrow !== undefined) {
    const reason = row.narrow(value);
    if (reason === undefined) return undefined;
    what = reason;
  } else {
    return undefined;
  }
  const elsewhere = [
    "your user config (~/.tern/config.jsonc)",
    ...(row.env ? [`the environment (${row.env[0]})`] : []),
    ...(row.flag ? [`--${row.flag.name}`] : []),
  ];
  const where = elsewhere.length === 1
    ? elsewhere[0]
    : `${elsewhere.slice(0, -1).join(", ")} or ${elsewhere.at(-1)}`;
  const at = place === undefined
    ? ""
    : `; it is ${place.variable === undefined ? "" : `${place.variable} `}at line ${place.line}${
      place.column === undefined ? "" : `, column ${place.column}`
    }`;
  return new ConfigError(
    `Refusing "${key}" in "${file}": ${what}; a project's files ${rule}, so set it in ${where}${at}`,
    { file, key, line: place?.line, column: place?.column },
  );
}
