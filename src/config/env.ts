/**
 * The environment layers: the process environment and the `.env` file in the working directory
 * read the same `TERN_*` / `OPENAI_*` variables. A `.env` file never changes the process env.
 */
import { ignoredDotenvLines } from "./_dotenv_lines.ts";
import { ConfigError, lineColumnAt } from "./errors.ts";
import { readWorkspaceText, type Warn } from "./workspace_file.ts";
import { warnPerson } from "../core/warnings.ts";
import { checkRule, valueFromText } from "./rules.ts";
import { SETTING_KEYS, type SettingKey, settingOf, type Settings } from "./settings.ts";
import { type ConfigSource, invalidSetting } from "./sources.ts";

/** Variables by name; empty values count as unset. */
export type Variables = Record<string, string | undefined>;

/** A parsed `.env` file. */
export interface Dotenv {
  file: string;
  text: string;
  variables: Variables;
}

/** What one layer contributes: validated settings and, per key, where each came from. */
export interface Layer {
  settings: Settings;
  sources: Partial<Record<SettingKey, ConfigSource>>;
}

/**
 * Reads the `.env` file at `file` in `workspace`; undefined when there is none, or when it is
 * not a regular file inside the workspace: a folder (often a Python virtual environment), a
 * FIFO (never opened: it would wait for a writer), a symlink out of it (then `warn` is told
 * why: see workspace_file.ts). Lines that are not `KEY=VALUE` are ignored, as `parseEnv` from
 * `node:util` ignores them, and `warn` is told their numbers (never their text: it may be a key).
 * @throws {ConfigError} when the file exists but cannot be read.
 */
export async function readDotenv(
  workspace: string,
  file: string,
  warn: Warn = warnPerson,
): Promise<Dotenv | undefined> {
  let text: string | undefined;
  try {
    text = readWorkspaceText(workspace, file, { what: ".env file", warn });
  } catch (error) {
    if (!(error instanceof ConfigError && error.cause instanceof Deno.errors.IsADirectory)) {
      throw error;
    }
    warn(`Skipping .env file "${file}": it is a folder, not a regular file`);
    return undefined;
  }
  if (text === undefined) return undefined;
  checkCarriageReturns(text, file);
  const ignored = ignoredDotenvLines(text);
  if (ignored.length > 0) {
    const lines = ignored.length === 1 ? `Line ${ignored[0]}` : `Lines ${listed(ignored)}`;
    const are = ignored.length === 1 ? "is" : "are";
    warn(`${lines} of .env file "${file}" ${are} not NAME=value: ignored`);
  }
  const { parseEnv } = await import("node:util");
  // Without a prototype: a variable a setting names (`apiKeyEnv: "constructor"`) that the file
  // does not set is unset, not Object's own function.
  const variables: Variables = Object.assign(Object.create(null), parseEnv(text));
  return { file, text, variables };
}

/** Variables tern reads that no setting lists. */
const OTHER_VARIABLES = ["TERN_API_KEY", "TERN_HOME", "TERN_EXTRA_ENV"];

/**
 * Tells `warn` of each `TERN_` variable of `dotenv` that is no variable tern reads but fewer than
 * three edits from a setting's (`TERN_MDOEL`): most likely mistyped, and otherwise ignored without
 * a word. Other names are left alone: a `.env` serves other programs too. Never throws.
 */
export async function warnMisspeltVariables(dotenv: Dotenv, warn: Warn): Promise<void> {
  const settings = SETTING_KEYS.flatMap((key) => settingOf(key).env ?? []);
  const known = new Set([...settings, ...OTHER_VARIABLES]);
  const misspelt = Object.keys(dotenv.variables).filter((name) =>
    /^TERN_[A-Z0-9_]+$/.test(name) && !known.has(name)
  );
  if (misspelt.length === 0) return;
  const { closestName } = await import("../core/edit_distance.ts");
  for (const name of misspelt) {
    const meant = closestName(name, [...settings, "TERN_API_KEY"], 3);
    if (meant === undefined) continue;
    const line = findAssignment(dotenv.text, name)?.line;
    warn(
      `${name} in .env file "${dotenv.file}"${line === undefined ? "" : ` (line ${line})`} is ` +
        `not a variable tern reads: did you mean ${meant}?`,
    );
  }
}

/**
 * Refuses a carriage return anywhere but at a line's end. A CRLF line end (a file saved on
 * Windows) is read as dotenv reads it, the CR dropped; a lone CR would be dropped silently
 * inside a value (`gp\rt` read as `gpt`), or join two lines into one value when the file ends
 * its lines with CR alone (`TERN_MODEL=m\rTERN_MAX_ROUNDS=5` is one model name).
 * @throws {ConfigError} naming the file and the line.
 */
function checkCarriageReturns(text: string, file: string): void {
  const at = text.search(/\r(?!\n|$)/);
  if (at < 0) return;
  const { line } = lineColumnAt(text, at);
  throw new ConfigError(
    `Invalid .env file "${file}": line ${line}: a carriage return (\\r) inside the line; ` +
      "save the file with LF or CRLF line endings",
    { file, line },
  );
}

/** `3, 7 and 9`; past five numbers, `3, 7, 9, 12, 15 and 4 more`. */
function listed(numbers: readonly number[]): string {
  const shown = numbers.slice(0, 5).map(String);
  const rest = numbers.length - shown.length;
  if (rest > 0) return `${shown.join(", ")} and ${rest} more`;
  return `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}

/**
 * Turns the variables of the settings table (`TERN_*`, `OPENAI_BASE_URL`) into validated
 * settings; of a key's variables the first set one wins. `dotenv` says the variables came from
 * that file rather than the process.
 * @throws {ConfigError} naming the variable, the key, the rule and the value when it is invalid.
 */
export function settingsFromVariables(variables: Variables, dotenv?: Dotenv): Layer {
  const settings: Record<string, unknown> = {};
  const sources: Layer["sources"] = {};
  for (const key of SETTING_KEYS) {
    const name = settingOf(key).env?.find((candidate) =>
      nonEmpty(variables[candidate]) !== undefined
    );
    if (name === undefined) continue;
    const source: ConfigSource = dotenv
      ? { layer: "dotenv", file: dotenv.file, variable: name }
      : { layer: "env", variable: name };
    settings[key] = parseText(key, nonEmpty(variables[name]) ?? "", source, dotenv);
    sources[key] = source;
  }
  return { settings: settings as Settings, sources };
}

/**
 * The checked value of `key` from the text of a variable or flag (`source`). A value of the
 * setting's own type (a flag set by code) is checked as it is.
 * @throws {ConfigError} from `invalidSetting()`.
 */
export function parseText(
  key: SettingKey,
  given: unknown,
  source: ConfigSource,
  dotenv?: Dotenv,
): unknown {
  const rule = settingOf(key).rule;
  const checked = checkRule(rule, typeof given === "string" ? valueFromText(rule, given) : given);
  if (checked.ok) return checked.value;
  const position = dotenv && source.layer === "dotenv"
    ? findAssignment(dotenv.text, source.variable)
    : undefined;
  throw invalidSetting(key, source, given, position);
}

/** Variable-name prefixes tern's process may read (bin/_env.sh grants them, and VLLM_API_KEY). */
export const READABLE_PREFIXES = ["TERN_", "OPENAI_", "ANTHROPIC_", "OPENROUTER_"] as const;

/**
 * Whether tern's process may read the variable `name`: its launcher (bin/_env.sh) grants the
 * READABLE_PREFIXES and the names listed in `TERN_EXTRA_ENV`, and reading any other variable
 * gets nothing, as if it were unset. Never throws.
 */
export function mayReadVariable(name: string): boolean {
  return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
}

/**
 * Why tern cannot read the variable `name` and how to let it, for a message: `tern's process
 * may read only variables starting with TERN_, …, VLLM_API_KEY and those listed in
 * TERN_EXTRA_ENV; add MY_KEY to it (comma-separated names, e.g. TERN_EXTRA_ENV=MY_KEY)`. Without
 * `name` (one not to echo), "add the name to it".
 */
export function unreadableVariableHint(name?: string): string {
  const prefixes = `${READABLE_PREFIXES.slice(0, -1).join(", ")} or ${READABLE_PREFIXES.at(-1)}`;
  const add = name === undefined
    ? "add the name to it (comma-separated names)"
    : `add ${name} to it (comma-separated names, e.g. TERN_EXTRA_ENV=${name})`;
  return `tern's process may read only variables starting with ${prefixes}, VLLM_API_KEY ` +
    `and those listed in TERN_EXTRA_ENV; ${add}`;
}

/** The trimmed value, or undefined when unset, blank or not a string. */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = typeof value === "string" ? value.trim() : undefined;
  return trimmed ? trimmed : undefined;
}

/** Line and column of the last `NAME=` assignment in a `.env` text (the one that wins). */
export function findAssignment(
  text: string,
  name: string,
): { line: number; column: number } | undefined {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)\s*=/.exec(lines[i]);
    if (match?.[2] === name) return { line: i + 1, column: match[1].length + 1 };
  }
  return undefined;
}
