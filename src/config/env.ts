/**
 * The environment layers: the process environment and the `.env` file in the working directory
 * read the same `TERN_*` / `OPENAI_*` variables. A `.env` file never changes the process env.
 */
import { ConfigError, formatValue } from "./errors.ts";
import { readWorkspaceText, type Warn } from "./workspace_file.ts";
import {
  checkSetting,
  ENV_VARIABLES,
  expectations,
  numericKeys,
  RULES,
  type SettingKey,
  type Settings,
} from "./schema.ts";

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
  sources: Partial<Record<SettingKey, string>>;
}

/**
 * Reads the `.env` file at `file` in `workspace`; undefined when there is none, or when it is
 * not a regular file inside the workspace (then `warn` is told why: see workspace_file.ts).
 * Lines that are not `KEY=VALUE` are ignored (`parseEnv` from `node:util` is lenient).
 * @throws {ConfigError} when the file exists but cannot be read.
 */
export async function readDotenv(
  workspace: string,
  file: string,
  warn?: Warn,
): Promise<Dotenv | undefined> {
  const text = readWorkspaceText(workspace, file, { what: ".env file", warn });
  if (text === undefined) return undefined;
  const { parseEnv } = await import("node:util");
  return { file, text, variables: parseEnv(text) };
}

/**
 * Turns `TERN_*` / `OPENAI_*` variables into validated settings. A `TERN_` variable beats its
 * `OPENAI_` fallback. `dotenv` says the variables came from that file rather than the process.
 * @throws {ConfigError} naming the variable and its value when the value is invalid.
 */
export function settingsFromVariables(variables: Variables, dotenv?: Dotenv): Layer {
  const settings: Record<string, unknown> = {};
  const sources: Layer["sources"] = {};
  for (const { key, names } of ENV_VARIABLES) {
    const name = names.find((candidate) => nonEmpty(variables[candidate]) !== undefined);
    if (name === undefined) continue;
    settings[key] = parseVariable(key, name, nonEmpty(variables[name]) ?? "", dotenv);
    sources[key] = describeVariable(name, dotenv);
  }
  return { settings: settings as Settings, sources };
}

/** "TERN_MODEL in the environment" or "TERN_MODEL in /work/.env". */
export function describeVariable(name: string, dotenv?: Dotenv): string {
  return `${name} in ${dotenv ? dotenv.file : "the environment"}`;
}

/** The trimmed value, or undefined when unset or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

function parseVariable(key: SettingKey, name: string, text: string, dotenv?: Dotenv): unknown {
  const value = numericKeys.has(key)
    ? (DECIMAL.test(text) ? Number(text) : Number.NaN)
    : RULES[key].kind === "boolean"
    ? parseBoolean(text)
    : text;
  const checked = checkSetting(key, value);
  if (checked.ok) return checked.value;
  const detail = `expected ${expectations[key]}, got ${formatValue(text)}`;
  if (dotenv === undefined) {
    throw new ConfigError(`Invalid environment variable ${name}: ${detail}`, { key: name });
  }
  const position = findAssignment(dotenv.text, name);
  const where = position ? `line ${position.line}: ` : "";
  throw new ConfigError(`Invalid .env file "${dotenv.file}": ${where}${name}: ${detail}`, {
    file: dotenv.file,
    key: name,
    ...position,
  });
}

/** "1"/"true"/"yes" and "0"/"false"/"no" (any case); anything else stays text and fails. */
function parseBoolean(text: string): boolean | string {
  const folded = text.toLowerCase();
  if (folded === "1" || folded === "true" || folded === "yes") return true;
  if (folded === "0" || folded === "false" || folded === "no") return false;
  return text;
}

/** Line and column of the last `NAME=` assignment in a `.env` text (the one that wins). */
function findAssignment(text: string, name: string): { line: number; column: number } | undefined {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)\s*=/.exec(lines[i]);
    if (match?.[2] === name) return { line: i + 1, column: match[1].length + 1 };
  }
  return undefined;
}
