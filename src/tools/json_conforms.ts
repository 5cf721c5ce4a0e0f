/**
 * A tool call's arguments checked against the tool's JSON Schema without zod, so that a tool
 * defined by its JSON Schema (`bash`) runs a well-formed call without loading zod's 200 KB:
 * 1–3 ms of round 1 (`bench/results/first_request_limits.md`). It knows one shape of
 * schema, the one such a tool has: an object with no other fields, whose fields are strings
 * (with `minLength`, `maxLength`), numbers or integers (with `minimum`, `maximum`) or booleans.
 * For any other schema {@linkcode conformance} gives no check, and every call goes to zod.
 *
 * A check says yes only where zod's schema built from the same JSON Schema (`fromJSONSchema`)
 * does, and for JSON values (what a model's call is) exactly where it does: lengths in code
 * points, numbers finite, integers safe, plain objects of data fields only.
 * tests/tools/json_conforms_test.ts compares the two on every edge. A call it refuses is not
 * refused yet: zod then decides, and words the error.
 */
import { codePointCount } from "../core/code_points.ts";
import type { JsonSchema } from "../core/tool_spec.ts";

/**
 * The arguments as a plain copy of what was checked, when they conform; undefined when not.
 * Never throws. A copy, not the value itself: a getter or a proxy could answer differently when
 * the tool reads it, so the tool gets exactly the values checked.
 */
export type Conformance = (value: unknown) => Record<string, unknown> | undefined;

type FieldCheck = (value: unknown) => boolean;

const FIELD_KEYWORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(["type", "description", "title", "minLength", "maxLength"]),
  number: new Set(["type", "description", "title", "minimum", "maximum"]),
  integer: new Set(["type", "description", "title", "minimum", "maximum"]),
  boolean: new Set(["type", "description", "title"]),
};
const OBJECT_KEYWORDS = new Set(["type", "properties", "required", "additionalProperties"]);

/**
 * The check for `schema`, or undefined when the schema is not of the shape described above
 * (a keyword it does not know, a nested object, an array, an enum, a default, a pattern).
 */
export function conformance(schema: JsonSchema): Conformance | undefined {
  if (!Object.keys(schema).every((key) => OBJECT_KEYWORDS.has(key))) return undefined;
  if (schema.type !== "object" || schema.additionalProperties !== false) return undefined;
  const properties = schema.properties ?? {};
  const required = schema.required ?? [];
  if (!isRecord(properties) || !Array.isArray(required)) return undefined;
  const fields = new Map<string, FieldCheck>();
  for (const [name, field] of Object.entries(properties)) {
    const check = isRecord(field) ? fieldCheck(field) : undefined;
    if (check === undefined) return undefined;
    fields.set(name, check);
  }
  if (!required.every((name) => typeof name === "string" && fields.has(name))) return undefined;
  // Set on a plain object, this name would change the copy's prototype instead.
  if (fields.has("__proto__")) return undefined;
  const optional = new Set([...fields.keys()].filter((name) => !required.includes(name)));
  return (value) => {
    if (!isRecord(value)) return undefined;
    try {
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return undefined;
      const copy: Record<string, unknown> = {};
      for (const key of Reflect.ownKeys(value)) {
        if (typeof key !== "string") return undefined;
        const check = fields.get(key);
        const slot = Object.getOwnPropertyDescriptor(value, key);
        // Data fields only: an accessor is refused (zod decides), so nothing is read twice.
        if (check === undefined || slot === undefined || !("value" in slot)) return undefined;
        const field: unknown = slot.value;
        // An optional field given as undefined is absent to zod (not in JSON: a caller's).
        if (field === undefined ? !optional.has(key) : !check(field)) return undefined;
        copy[key] = field;
      }
      return required.every((name) => Object.hasOwn(copy, name)) ? copy : undefined;
    } catch {
      return undefined; // a proxy that throws: zod decides
    }
  };
}

function fieldCheck(field: Record<string, unknown>): FieldCheck | undefined {
  const type = field.type;
  if (typeof type !== "string" || !Object.hasOwn(FIELD_KEYWORDS, type)) return undefined;
  if (!Object.keys(field).every((key) => FIELD_KEYWORDS[type].has(key))) return undefined;
  const bounds = [field.minLength, field.maxLength, field.minimum, field.maximum];
  if (!bounds.every((bound) => bound === undefined || Number.isFinite(bound))) return undefined;
  const min = (field.minLength ?? field.minimum ?? -Infinity) as number;
  const max = (field.maxLength ?? field.maximum ?? Infinity) as number;
  switch (type) {
    case "string":
      return (value) => {
        if (typeof value !== "string") return false;
        const length = codePointCount(value);
        return length >= min && length <= max;
      };
    case "number":
      return (value) =>
        typeof value === "number" && Number.isFinite(value) && value >= min &&
        value <= max;
    case "integer":
      return (value) =>
        Number.isSafeInteger(value) && (value as number) >= min &&
        (value as number) <= max;
    default:
      return (value) => typeof value === "boolean";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
