/**
 * The zod schema of one server entry, in tern's own files (strict) and in `.mcp.json` (unknown
 * keys ignored), and the wording of its issues. Imported only when a config file exists.
 */
import * as z from "../core/zod.ts";
import { formatValue } from "../config/errors.ts";
import type { KeyPath } from "./_config_values.ts";

/** tern's own files (`mcp.json`, `mcp/*.json`) or the `.mcp.json` other agents use. */
export type ConfigFormat = "tern" | "mcp.json";

/** Longest timeout `setTimeout` can wait (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

const bool = z.boolean({ error: "expected true or false" });
const nonEmptyText = z.string({ error: "expected a string" }).min(1, {
  error: "expected a non-empty string",
});
const texts = z.array(z.string({ error: "expected a string" }), {
  error: "expected an array of strings",
});
const timeout = z.number({ error: "expected a number of milliseconds" })
  .int({ error: "expected a whole number of milliseconds" })
  .min(1, { error: "expected a positive number of milliseconds" })
  .max(MAX_TIMEOUT_MS, { error: `expected at most ${MAX_TIMEOUT_MS} milliseconds` });
const variableName = z.string().regex(/^[^=\0]+$/, {
  error: 'an environment variable name must be non-empty and contain no "="',
});
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
  error: "a header name is letters, digits and !#$%&'*+.^_`|~-",
});

/** Keys of the `sandbox` object. */
export const SANDBOX_KEYS = ["network", "writable"] as const;

const sandbox = z.union([
  bool,
  z.strictObject({
    network: bool.optional(),
    writable: z.array(nonEmptyText, { error: "expected an array of paths" }).optional(),
  }),
], { error: 'expected true, false or an object with "network" and "writable"' });

const fields = {
  type: z.enum(["stdio", "http", "streamable-http", "sse"], {
    error: 'expected "stdio", "http" or "streamable-http"',
  }),
  command: nonEmptyText,
  args: texts,
  env: z.record(variableName, z.string({ error: "expected a string" }), {
    error: "expected an object of strings",
  }),
  cwd: nonEmptyText,
  url: nonEmptyText,
  headers: z.record(headerName, z.string({ error: "expected a string" }), {
    error: "expected an object of strings",
  }),
  enabled: bool,
  disabled: bool,
  startupTimeoutMs: timeout,
  requestTimeoutMs: timeout,
  sandbox,
};

const optionalFields = Object.fromEntries(
  Object.entries(fields).map(([key, schema]) => [key, schema.optional()]),
) as { [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]> };

const entrySchemas = {
  tern: z.strictObject(optionalFields, { error: "expected an object" }),
  "mcp.json": z.looseObject({ ...optionalFields, timeout: timeout.optional() }, {
    error: "expected an object",
  }),
};

/** The known keys of an entry in each format, in the order messages list them. */
export const ENTRY_KEYS: Record<ConfigFormat, readonly string[]> = {
  tern: Object.keys(fields),
  "mcp.json": [...Object.keys(fields), "timeout"],
};

/** An entry that passed the schema: every key optional, unknown keys possibly present. */
export type EntryInput = z.infer<(typeof entrySchemas)["mcp.json"]>;

/**
 * Checks `value` against the entry schema of `format`.
 * @returns undefined when valid, else the first issue as a path (relative to the entry) and a
 *   detail for the message.
 */
export function checkEntry(
  value: unknown,
  format: ConfigFormat,
): { path: KeyPath; detail: string } | undefined {
  const parsed = entrySchemas[format].safeParse(value);
  if (parsed.success) return undefined;
  return describeIssue(parsed.error.issues[0], value);
}

function describeIssue(issue: z.core.$ZodIssue, root: unknown): { path: KeyPath; detail: string } {
  const path = issue.path.filter((segment) => typeof segment !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const known = path.at(-1) === "sandbox" ? SANDBOX_KEYS : ENTRY_KEYS.tern;
    return {
      path: [...path, issue.keys[0]],
      detail: `unknown key — known keys: ${known.map((key) => `"${key}"`).join(", ")}`,
    };
  }
  if (issue.code === "invalid_key") {
    return { path, detail: issue.issues[0]?.message ?? "invalid key" };
  }
  if (issue.code === "invalid_union") {
    // The branch that got deepest (`sandbox.network` rather than `sandbox`) says most.
    const deepest = issue.errors.map((branch) => branch[0])
      .filter((inner) => inner !== undefined && inner.path.length > 0)
      .sort((a, b) => b.path.length - a.path.length)[0];
    if (deepest) {
      return describeIssue({ ...deepest, path: [...issue.path, ...deepest.path] }, root);
    }
  }
  return { path, detail: `${issue.message}, got ${formatValue(valueAt(root, path))}` };
}

function valueAt(root: unknown, path: KeyPath): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value;
}
