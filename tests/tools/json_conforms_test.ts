/**
 * conformance() against zod: for the schemas it knows, a check says yes exactly where zod's
 * schema built from the same JSON Schema does, on every edge of every keyword, and it knows
 * no other schema.
 */
import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { fromJSONSchema } from "../../src/core/zod.ts";
import type { JsonSchema } from "../../src/core/tool_spec.ts";
import { conformance } from "../../src/tools/json_conforms.ts";
import { bashParameters } from "../../src/tools/bash_spec.ts";

/** A value for each edge the keywords have, and some of every other JSON type. */
const STRINGS = [
  "",
  "a",
  "ab",
  "😀",
  "a😀",
  "\ud800",
  "\udc00\ud800",
  "\ud800\udc00",
  "x".repeat(999),
  "x".repeat(1000),
  "x".repeat(1001),
  "😀".repeat(500),
  "😀".repeat(999) + "x",
  "😀".repeat(1000),
  "😀".repeat(1001),
  "😀".repeat(999) + "\ud800",
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  1.5,
  0.5,
  65535,
  65536,
  600000,
  600001,
  599999.5,
  2 ** 53 - 1,
  2 ** 53,
  -(2 ** 53),
  1e308,
  NaN,
  Infinity,
  -Infinity,
];
const OTHERS = [true, false, null, [], ["a"], {}, { a: 1 }, undefined];
const VALUES: unknown[] = [...STRINGS, ...NUMBERS, ...OTHERS];

/** Schemas of the shape conformance() knows, with bounds on every keyword. */
const SCHEMAS: Record<string, JsonSchema> = {
  bash: bashParameters(120_000),
  "bash with another default": bashParameters(5_000),
  bounds: {
    type: "object",
    properties: {
      s: { type: "string", minLength: 2, maxLength: 3 },
      n: { type: "number", minimum: -1.5, maximum: 1.5 },
      i: { type: "integer", minimum: -2, maximum: 65536 },
      b: { type: "boolean", title: "a flag" },
      free: { type: "string" },
      real: { type: "number" },
      whole: { type: "integer" },
    },
    required: ["s", "b"],
    additionalProperties: false,
  },
  empty: { type: "object", properties: {}, additionalProperties: false },
};

/** Every argument object worth asking about `schema`: each field with each value, alone or with its requirements. */
function candidates(schema: JsonSchema): unknown[] {
  const fields = schema.properties as Record<string, JsonSchema>;
  const required = schema.required as string[] | undefined ?? [];
  const base: Record<string, unknown> = {};
  // A passing value for each required field, found by asking zod about the field alone.
  for (const name of required) {
    const alone = fromJSONSchema({ type: "object", properties: { [name]: fields[name] } });
    base[name] = VALUES.find((value) => alone.safeParse({ [name]: value }).success);
  }
  const out: unknown[] = [
    ...VALUES,
    base,
    Object.create(null),
    Object.assign(Object.create(null), base),
  ];
  for (const name of [...Object.keys(fields), "extra", "__proto__", "constructor"]) {
    for (const value of VALUES) {
      out.push({ ...base, [name]: value });
      out.push({ [name]: value });
      out.push(JSON.parse(JSON.stringify({ ...base, [name]: value }) ?? "null"));
    }
  }
  out.push(JSON.parse(`{"__proto__": {"command": "x"}}`));
  for (const name of required) {
    const without = { ...base };
    delete without[name];
    out.push(without);
  }
  return out;
}

for (const [label, schema] of Object.entries(SCHEMAS)) {
  Deno.test(`conformance() agrees with zod on every edge: ${label}`, () => {
    const check = conformance(schema);
    notEqual(check, undefined, "the schema should be of the shape conformance() knows");
    const zod = fromJSONSchema(schema as never);
    let accepted = 0;
    let refused = 0;
    for (const value of candidates(schema)) {
      const ours = check!(value);
      const theirs = zod.safeParse(value);
      equal(ours !== undefined, theirs.success, `disagree on ${describe(value)}`);
      if (ours !== undefined) {
        accepted++;
        deepEqual(ours, theirs.data, `data of ${describe(value)}`);
        ok(ours !== value, "the check gives a copy");
      } else refused++;
    }
    // The corpus reaches both verdicts, so agreement is not agreement on one answer.
    notEqual(accepted, 0);
    notEqual(refused, 0);
    // Values no JSON call is: a check may refuse what zod takes (zod then decides), never the
    // other way round.
    const base = candidates(schema).find((value) => check!(value)) as object;
    const notJson = [{ ...base, [Symbol("s")]: 1 }, Object.assign(new (class {})(), base)];
    for (const value of notJson) {
      if (check!(value) !== undefined) equal(zod.safeParse(value).success, true);
    }
  });
}

Deno.test("conformance() knows no other schema: every call then goes to zod", () => {
  const field = (extra: Record<string, unknown>) => ({
    type: "object",
    properties: { a: { type: "string", ...extra } },
    additionalProperties: false,
  });
  const unknown: JsonSchema[] = [
    field({ enum: ["x"] }),
    field({ default: "x" }),
    field({ pattern: "^x$" }),
    field({ format: "uri" }),
    field({ minLength: "1" }),
    field({ maxLength: Infinity }),
    {
      type: "object",
      properties: { a: { type: "array", items: { type: "string" } } },
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { a: { type: "object", properties: {} } },
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { a: { anyOf: [{ type: "string" }] } },
      additionalProperties: false,
    },
    {
      type: "object",
      properties: { a: { type: ["string", "null"] } },
      additionalProperties: false,
    },
    { type: "object", properties: { a: { type: "null" } }, additionalProperties: false },
    { type: "object", properties: { a: { type: "string" } } },
    { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
    {
      type: "object",
      properties: { a: { type: "string" } },
      required: ["b"],
      additionalProperties: false,
    },
    { type: "object", properties: {}, additionalProperties: false, $defs: {} },
    { type: "string" },
  ];
  for (const schema of unknown) equal(conformance(schema), undefined, JSON.stringify(schema));
});

Deno.test("conformance() says no, and never throws, for values a JSON call cannot be", () => {
  const check = conformance(bashParameters(120_000))!;
  const throwing = new Proxy({}, {
    ownKeys() {
      throw new Error("no keys");
    },
  });
  const getter = Object.defineProperty({}, "command", {
    enumerable: true,
    get() {
      throw new Error("no value");
    },
  });
  const fine = Object.defineProperty({}, "command", { enumerable: true, get: () => "echo" });
  class Args {
    command = "echo";
  }
  for (const value of [throwing, getter, fine, new Args(), new Map([["command", "echo"]])]) {
    equal(check(value), undefined);
  }
  deepEqual(check({ command: "echo" }), { command: "echo" });
});

Deno.test("conformance() gives the tool the values it checked, whatever a proxy answers later", () => {
  const check = conformance(bashParameters(120_000))!;
  // A proxy that shows a valid command to whoever looks first, and an empty one after.
  let looks = 0;
  const target = { command: "echo checked" };
  const shifty = new Proxy(target, {
    getOwnPropertyDescriptor(object, key) {
      const slot = Reflect.getOwnPropertyDescriptor(object, key);
      return looks++ === 0 || slot === undefined ? slot : { ...slot, value: "" };
    },
    get(object, key) {
      return looks++ === 0 ? Reflect.get(object, key) : "";
    },
  });
  const copy = check(shifty);
  deepEqual(copy, { command: "echo checked" });
  ok(looks > 0);
  deepEqual(check(copy), copy, "the copy conforms");
});

Deno.test("conformance() refuses a schema with a __proto__ field (a copy could not hold it)", () => {
  const schema = JSON.parse(
    `{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}`,
  );
  equal(conformance(schema), undefined);
});

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text;
  } catch {
    return String(value);
  }
}
