/**
 * The zod schema of a config file (`config.jsonc`): a strict object of the keys in `RULES`,
 * each checked by the same rule the environment and flags use. Imported only when a config file
 * exists, so runs without one never load zod.
 */
import { z } from "zod";
import { checkRule, type Rule, RULES, type SettingKey, type Settings } from "./schema.ts";

function fromRule(rule: Rule) {
  return z.unknown().transform((value, ctx) => {
    const checked = checkRule(rule, value);
    if (checked.ok) return checked.value;
    ctx.addIssue({ code: "custom", message: "invalid value" });
    return z.NEVER;
  }).optional();
}

const shape = Object.fromEntries(
  Object.entries(RULES).map(([key, rule]) => [key, fromRule(rule)]),
) as Record<SettingKey, ReturnType<typeof fromRule>>;

/** Every key optional, unknown keys rejected. */
export const configFileSchema: z.ZodType<Settings> = z.strictObject(shape) as z.ZodType<Settings>;
