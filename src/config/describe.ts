/**
 * Human-readable configuration for `tern config`, with the API key never shown, nor the
 * credentials a base URL may carry in its user part, query or path (`shownUrl`).
 */
import { visibleText } from "../core/terminal_text.ts";
import { shownUrl } from "../core/url_text.ts";
import type { TernConfig } from "./schema.ts";
import { SETTING_KEYS, settingOf } from "./settings.ts";
import { type ConfigSource, describeSource, isProjectSource } from "./sources.ts";
import { looksLikeKey } from "./errors.ts";

/** Structured settings (`limits`, `providers`, …), each shown on one line. */
const STRUCTURED: ReadonlySet<string> = new Set(
  SETTING_KEYS.filter((key) => settingOf(key).rule.kind === "structured"),
);

/**
 * The plain settings in table order, the key after the base URL, then the structured ones, the
 * tern directory last. `apiKeyEnv` shows as the variable on the `apiKey` line, once it is set.
 */
const ORDER: ReadonlyArray<string> = [
  ...SETTING_KEYS.filter((key) => !STRUCTURED.has(key) && !settingOf(key).secret)
    .flatMap((key) => key === "baseUrl" ? [key, "apiKey"] : [key]),
  ...STRUCTURED,
  "ternHome",
];

/** Longest shown value of a structured setting, in characters. */
const STRUCTURED_CHARS = 160;

const WIDTH = Math.max(...ORDER.map((key) => key.length)) + 2;

/** What `loadConfig()` says about keys of the environment it did not use. */
export interface WithheldKeys {
  variables: string[];
  chooser: ConfigSource;
}

/** Options of {@linkcode describeConfig}. */
export interface DescribeOptions {
  /** What `loadConfig()` says about keys of the environment it did not use. */
  withheld?: WithheldKeys;
  /**
   * Masks secrets in a value's text (the secret masker, which this layer cannot import), before
   * a long value is cut short: a cut could leave part of a key the masker no longer finds.
   */
  mask?: (text: string) => string;
}

/**
 * One line per field, `key  value  (source)`, with `sources` from `loadConfig()`. The API key
 * appears only as `set (from TERN_API_KEY in the environment)` or `not set`, with why the
 * environment's keys were not used when `withheld` says so. Never throws.
 */
export function describeConfig(
  config: TernConfig,
  sources: Readonly<Record<string, ConfigSource>> = {},
  options: DescribeOptions = {},
): string {
  const { withheld, mask = (text: string) => text } = options;
  return ORDER.map((key) => {
    const label = key.padEnd(WIDTH);
    const source = sources[key] === undefined ? undefined : describeSource(sources[key]);
    if (key === "apiKey") {
      const note = withheld === undefined ? "" : ` (${withheldNote(withheld)})`;
      if (!config.apiKey) return `${label}not set${note}`;
      return `${label}set${source ? ` (from ${source})` : ""}${note}`;
    }
    const value = (config as unknown as Record<string, unknown>)[key];
    if (value === undefined || isEmpty(value)) return `${label}not set`;
    const shown = STRUCTURED.has(key)
      ? compactJson(redacted(value, key), mask)
      : key === "baseUrl" && typeof value === "string"
      ? shownUrl(value)
      : typeof value === "string" && looksLikeKey(value)
      ? "a value that looks like a key (not shown)"
      : mask(String(value));
    return `${label}${shown}${source ? `  (${source})` : ""}`;
  }).join("\n");
}

function isEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  return value !== null && typeof value === "object" && Object.keys(value).length === 0;
}

function compactJson(value: unknown, mask: (text: string) => string): string {
  const text = mask(JSON.stringify(value));
  return text.length <= STRUCTURED_CHARS ? text : `${text.slice(0, STRUCTURED_CHARS - 1)}…`;
}

/**
 * `value` without what may be secret: a header's value (a provider's `Authorization`), a key
 * variable's name that is not in capitals (it may be the key itself), and the credentials of
 * any URL (a base URL's, `webFetch.reader`'s, whatever the key that holds it is called).
 */
function redacted(value: unknown, key: string): unknown {
  const hide = (name: unknown) =>
    typeof name === "string" && !/^[A-Z_][A-Z0-9_]*$/.test(name) ? "(hidden)" : name;
  if (Array.isArray(value)) return value.map((item) => redacted(item, key));
  if (value === null || typeof value !== "object") {
    if (/keyEnv$/i.test(key)) return hide(value);
    return typeof value === "string" && value.includes("://") ? shownUrl(value) : value;
  }
  const entries = Object.entries(value);
  if (key === "headers") return Object.fromEntries(entries.map(([name]) => [name, "…"]));
  if (key === "keyEnv") return Object.fromEntries(entries.map(([name, v]) => [name, hide(v)]));
  return Object.fromEntries(entries.map(([name, v]) => [name, redacted(v, name)]));
}

function withheldNote({ variables, chooser }: WithheldKeys): string {
  return `${variables.join(", ")} in the environment not used: the server is chosen by ` +
    `${describeSource(chooser)}, and a server a project chooses gets only keys from the ` +
    "project's .env";
}

/**
 * What a run says before it starts when the project's files (`.tern/config.jsonc`, `.env`)
 * chose where the conversation goes (the base URL or the provider) or which model answers it,
 * and which file chose each. A repository, or a command that wrote its `.env`, can point every
 * later run at a server of its own; the keys and the person's own files from tern's home stay
 * withheld (`TernConfig.serverChosenBy`), but the prompts, the code and the tool results go
 * there, so the person is told each time. A model it names on the person's own server is one
 * the person pays for, at that model's price. Undefined when the person chose (or nobody did).
 */
export function projectModelNotice(
  config: Pick<TernConfig, "baseUrl" | "provider"> & Partial<Pick<TernConfig, "model">>,
  sources: Readonly<Record<string, ConfigSource>>,
): string | undefined {
  const model = isProjectSource(sources.model) && config.model !== undefined
    ? `the model is ${visibleText(config.model)}, chosen by ${describeSource(sources.model)}`
    : undefined;
  const server = serverNotice(config, sources);
  if (server === undefined) {
    return model && `${model}: your requests go to it, at its price (pass --model to choose ` +
        "yourself)";
  }
  return model === undefined ? server : `${server}; ${model} (pass --model to choose yourself)`;
}

function serverNotice(
  config: Pick<TernConfig, "baseUrl" | "provider">,
  sources: Readonly<Record<string, ConfigSource>>,
): string | undefined {
  if (isProjectSource(sources.baseUrl) && config.baseUrl !== undefined) {
    return `the model's server is ${shownUrl(config.baseUrl)}, chosen by ${
      describeSource(sources.baseUrl)
    }: ` + `this run's conversation goes there, ${WITHHELD} (pass --base-url to choose yourself)`;
  }
  if (isProjectSource(sources.provider) && config.provider !== undefined) {
    return `the provider is ${config.provider}, chosen by ${describeSource(sources.provider)}: ` +
      `this run's conversation goes there, ${WITHHELD} (pass --provider to choose yourself)`;
  }
  return undefined;
}

/** What of the person's a server a project chose never gets (src/harness/conversation.ts). */
const WITHHELD = "but not your own context and prompt files, skills, memory.md, facts for " +
  "every workspace or MCP servers, and in auto mode it reviews nothing (a person does)";
