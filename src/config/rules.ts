/**
 * What a setting accepts: the rule kinds of the settings table (`settings.ts`) and the one
 * checker every layer uses. Imports only `terminal_text.ts` (which imports nothing), so the
 * command line can use it at start-up; config files check the same rules through zod
 * (`file_schema.ts`), loaded only for a file.
 */

import { hasHiddenCharacter } from "../core/terminal_text.ts";

/** A rule; `structured` keys are checked only by the zod schema of config files. */
export type Rule =
  | { kind: "text" }
  | { kind: "url" }
  | { kind: "envName" }
  | { kind: "integer"; min: number; max?: number }
  | { kind: "number"; min: number; max: number }
  | { kind: "choice"; values: readonly string[] }
  | { kind: "boolean" }
  /** A list of non-empty strings; as text (environment, flags) comma-separated. */
  | { kind: "list" }
  | StructuredRule<unknown, unknown>;

/**
 * A key holding a structure (`profiles`, `rules`, …): `File` is what one layer gives, `Resolved`
 * what the merged config holds. The two type parameters exist only for the types derived from
 * the table; at run time this is `{ kind: "structured" }`.
 */
export interface StructuredRule<File, Resolved = File> {
  kind: "structured";
  /** Never set: carries the types. */
  readonly types?: { file: File; resolved: Resolved };
}

/** A structured rule whose layer value is `File` and merged value `Resolved`. */
export function structured<File, Resolved = File>(): StructuredRule<File, Resolved> {
  return { kind: "structured" };
}

/** The value one layer gives for a key of rule `R`. */
export type LayerValue<R> = R extends { kind: "text" | "url" | "envName" } ? string
  : R extends { kind: "integer" | "number" } ? number
  : R extends { kind: "boolean" } ? boolean
  : R extends { kind: "list" } ? string[]
  : R extends { kind: "choice"; values: readonly (infer V)[] } ? V
  : R extends StructuredRule<infer File, unknown> ? File
  : never;

/** The value the merged configuration holds for a key of rule `R`. */
export type ResolvedValue<R> = R extends StructuredRule<unknown, infer Resolved> ? Resolved
  : LayerValue<R>;

/** A checked scalar (or list) setting. */
export type SettingValue = string | number | boolean | string[];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * The value a text (an environment variable or a flag) stands for under `rule`: a number for
 * numeric rules (`NaN` when it is no decimal), `true`/`false` for `1`, `true`, `yes` / `0`,
 * `false`, `no` (any case), otherwise the text, which {@linkcode checkRule} then judges.
 */
export function valueFromText(rule: Rule, text: string): unknown {
  // An integer is written in digits: `1e3` or `25.0` is refused as `--limit` refuses it.
  if (rule.kind === "integer") return INTEGER.test(text.trim()) ? Number(text) : Number.NaN;
  if (rule.kind === "number") return DECIMAL.test(text.trim()) ? Number(text) : Number.NaN;
  if (rule.kind === "boolean") {
    const folded = text.trim().toLowerCase();
    if (folded === "1" || folded === "true" || folded === "yes") return true;
    if (folded === "0" || folded === "false" || folded === "no") return false;
  }
  return text;
}

/** Validates and normalises one value (strings trimmed, URLs without a trailing slash). */
export function checkRule(
  rule: Rule,
  value: unknown,
): { ok: true; value: SettingValue } | { ok: false } {
  switch (rule.kind) {
    case "list": {
      const items = typeof value === "string"
        ? value.split(",")
        : Array.isArray(value) && value.every((item) => typeof item === "string")
        ? value
        : undefined;
      if (items === undefined) return { ok: false };
      const trimmed = items.map((item) => item.trim());
      if (typeof value === "string") {
        // An empty text is the empty list (it clears a value set elsewhere) and one comma
        // may end the text; any other empty item (",,", " , ") is a typo and refused.
        if (value.trim() === "") return { ok: true, value: [] };
        if (trimmed.length > 1 && trimmed.at(-1) === "") trimmed.pop();
      }
      return trimmed.includes("") ? { ok: false } : { ok: true, value: trimmed };
    }
    case "choice":
      return typeof value === "string" && rule.values.includes(value.trim())
        ? { ok: true, value: value.trim() }
        : { ok: false };
    case "boolean":
      return typeof value === "boolean" ? { ok: true, value } : { ok: false };
    case "text":
    case "url":
    case "envName": {
      if (typeof value !== "string") return { ok: false };
      const text = value.trim();
      if (rule.kind === "text") {
        // A name (model, provider, profile): a line break or an invisible character in it
        // would draw rows of its own wherever it is shown (`tern config`, a session's export).
        return text === "" || hasHiddenCharacter(text) ? { ok: false } : { ok: true, value: text };
      }
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
    case "structured":
      return { ok: false };
  }
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
}
