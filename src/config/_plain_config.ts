/**
 * The quick way to read a config file. Most files set a few plain keys (`model`, `provider`,
 * `maxRounds`…) that `checkSetting()` validates on its own, so loading jsonc-parser and zod for
 * them costs more than the rest of the start (tens of milliseconds). `parsePlainConfig()`
 * reads such a file with `JSON.parse` once strip-json-comments has blanked its comments and
 * trailing commas, and gives up on anything else: structured keys, unknown or secret keys, a
 * key given twice, a syntax or value error. The full check then runs and returns the same
 * settings or the error with its line and column, so a file reads the same either way.
 */
import stripJsonComments from "strip-json-comments";
import { checkSetting, isSecretKeyName } from "./schema.ts";
import { SETTING_KEYS, settingOf, type Settings } from "./settings.ts";

/**
 * The settings of config file text `source` (without a byte order mark) when it is a JSONC
 * object of valid plain keys, in the order the full check gives them; undefined for anything
 * else, including every invalid file. Never throws.
 */
export function parsePlainConfig(source: string): Settings | undefined {
  const json = stripJsonComments(source, { trailingCommas: true });
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const given = value as Record<string, unknown>;
  const count = Object.keys(given).length;
  // `{,}` is no JSONC, though without its "trailing" comma it is JSON (a comma in a comment
  // only sends the file to the full check).
  if (count === 0 && source.includes(",")) return undefined;
  // JSON.parse keeps the last of two equal keys; the full check reports the first one's errors.
  // Every key written is found here, escapes and all (`"max\u0052ounds"` is `maxRounds` again);
  // a match inside a string only sends the file to the full check.
  if ((json.match(/"(?:[^"\\]|\\.)*"\s*:/g)?.length ?? 0) !== count) return undefined;
  const settings: Record<string, unknown> = {};
  let checked = 0;
  for (const key of SETTING_KEYS) {
    if (!Object.hasOwn(given, key) || settingOf(key).rule.kind === "structured") continue;
    const result = checkSetting(key, given[key]);
    if (!result.ok || isSecretKeyName(key)) return undefined;
    settings[key] = result.value;
    checked++;
  }
  return checked === count ? settings as Settings : undefined;
}
