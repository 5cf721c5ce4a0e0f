/**
 * An MCP server's tool as the agent sees it: the same shape as a built-in tool (name,
 * description, JSON Schema, `readOnly`, `run` that never throws), so the registry, the
 * permission gate and the audit treat both alike. Arguments are validated against the
 * server's input schema before anything is sent (its patterns matched in linear time, each
 * schema compiled apart from every other); only tools annotated `readOnlyHint` count as
 * read-only, and only where the server's word is taken ({@linkcode readOnlyHintCounts}).
 *
 * What it declares about itself (see `src/tools/define.ts`): it runs on the host (in its
 * server, which tern does not confine), it only reads when the server says so (`readOnlyHint`:
 * a hint from the server, but the only word there is, and one that loosens review: taken from
 * your own servers, and from a project's only when its sandbox could do nothing else), and a top-level string `path` argument is the one path tern
 * can name for it (written unless read-only): a guess, kept so path rules (a deny rule on
 * `secret/**` for every tool) and plan path locks cover MCP tools too.
 */
import type { Ajv, Options } from "ajv";
import type { RE2JS } from "re2js";
import type { Observation } from "../core/observation.ts";
import type { JsonSchema } from "../core/tool_spec.ts";
import { McpCallError, type McpConnection, type McpToolInfo } from "./connection.ts";
import { resultObservation } from "./results.ts";
import type { McpServerConfig } from "./types.ts";
import { withoutInvisible } from "../core/invisible_text.ts";
import { COPY, copyJson } from "../core/json_depth.ts";

/** The longest description passed to the model; servers sometimes send manuals. */
const MAX_DESCRIPTION = 4000;

/**
 * The most bytes of JSON a tool's input schema may take as the model gets it (about 16,000
 * tokens); a tool over it is not offered. Real schemas take a few KB at most (the reference
 * servers' largest under 1 KB), while every request carries the schemas of the tools offered
 * and loaded: one tool over this would cost more than a tenth of a 128K-token window on every
 * request, however few tools a server has.
 */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/** A server's tool, ready for the tool registry. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  readonly readOnly: boolean;
  /** MCP tools run in their server, outside tern's sandbox. */
  readonly runsIn: "host";
  /** The call's top-level string `path` argument, if any (see the module comment). */
  paths(args: unknown): Promise<readonly { path: string; write: boolean }[]>;
  readonly parameters: JsonSchema;
  /** The server's name and the tool's own name there. */
  readonly server: string;
  readonly tool: string;
  /** Validates and calls. Never throws: every outcome is an Observation. */
  run(args: unknown, ctx: { signal: AbortSignal }): Promise<Observation>;
}

/**
 * Whether a tool's `readOnlyHint` from the server `config` makes it read-only for tern. A read-only
 * tool runs without a question in every mode and under `:read-only`, and is not watched for
 * changes: that is a person's call. Your own servers' hints count (you chose the server). A
 * project's server is the repository's word on its own tools, so its hints count only when its
 * sandbox leaves it nothing to change: no writable folder and no network.
 */
export function readOnlyHintCounts(config: Pick<McpServerConfig, "scope" | "sandbox">): boolean {
  if (config.scope === "user") return true;
  const sandbox = config.sandbox;
  return sandbox !== undefined && sandbox.writable.length === 0 && !sandbox.network;
}

/**
 * Adapts tool `info` of `connection`, exposed to the model as `name`; `hintCounts` says whether
 * the server's `readOnlyHint` is taken ({@linkcode readOnlyHintCounts}).
 */
export function mcpTool(
  connection: Pick<McpConnection, "name" | "callTool">,
  info: McpToolInfo,
  name: string,
  hintCounts: boolean,
): McpTool {
  const parameters = modelSchema(info.inputSchema);
  let validate: Promise<(args: unknown) => string | undefined> | undefined;
  const readOnly = hintCounts && info.annotations?.readOnlyHint === true;
  return {
    name,
    description: describe(connection.name, info),
    readOnly,
    runsIn: "host",
    // deno-lint-ignore require-await
    async paths(args) {
      const path = typeof args === "object" && args !== null
        ? (args as Record<string, unknown>).path
        : undefined;
      return typeof path === "string" && path !== "" ? [{ path, write: !readOnly }] : [];
    },
    parameters,
    server: connection.name,
    tool: info.name,
    async run(args, ctx) {
      const input = args ?? {};
      validate ??= compile(parameters);
      const problem = (await validate)(input);
      if (problem !== undefined) {
        return {
          status: "ERROR",
          code: "INVALID_ARGUMENTS",
          message: `Invalid arguments for "${name}": ${problem}`,
        };
      }
      if (ctx.signal.aborted) return cancelled(name);
      try {
        return resultObservation(name, await connection.callTool(info.name, input, ctx.signal));
      } catch (error) {
        return callFailure(name, error);
      }
    },
  };
}

/**
 * Why `info` of `server` is not offered to the model (its schema is over
 * {@linkcode MAX_SCHEMA_BYTES}), as a warning naming both and the size; undefined when it is.
 */
export function schemaProblem(server: string, info: McpToolInfo): string | undefined {
  const bytes = new TextEncoder().encode(JSON.stringify(modelSchema(info.inputSchema))).length;
  if (bytes <= MAX_SCHEMA_BYTES) return undefined;
  const name = info.name.replace(/[^\p{L}\p{N}\p{P}\p{S} ]/gu, "?").slice(0, 100);
  return `MCP server "${server}": tool "${name}" is not offered to the model: its input schema ` +
    `takes ${kilobytes(bytes)} of JSON, over the limit of ${kilobytes(MAX_SCHEMA_BYTES)}`;
}

function kilobytes(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString("en-US")} KB`;
}

/**
 * The description the model gets: the server's own, cut, without the characters that draw as
 * nothing (`withoutInvisible`): what the model reads of it is what a person can read of it
 * (`tern mcp tools` shows those characters as `⟨U+E0049⟩`, so a person sees they were there).
 */
function describe(server: string, info: McpToolInfo): string {
  const text = [info.description, info.title, info.annotations?.title]
    .map((words) => withoutInvisible(words ?? "").trim())
    .find((words) => words !== "") ?? `Tool "${withoutInvisible(info.name)}"`;
  const cut = text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}…` : text;
  return `${cut}\n(MCP server "${server}")`;
}

/**
 * The input schema as model APIs take it: an object schema without `$schema`, its text without
 * the characters that draw as nothing (see {@linkcode describe}): descriptions and titles, and
 * as much every other string and key the model reads but a call is not checked against (a
 * `default`, `examples`, a `$comment`, a keyword of the server's own and what it holds). What a
 * call is checked against (types, names, enums, consts, patterns, formats, references) stays as
 * the server wrote it.
 */
function modelSchema(input: Record<string, unknown>): JsonSchema {
  const roles = new WeakMap<object, Role>();
  const { $schema: _ignored, ...schema } = copyJson(input ?? {}, (value, { key, parent }) => {
    const holder = typeof parent === "object" && parent !== null ? parent : undefined;
    const inherited = holder && roles.get(holder);
    // A key is a keyword only in a schema: not in a list, an enum or a map of names.
    const keyword = holder && !inherited && !Array.isArray(holder) ? String(key) : undefined;
    const listed = Array.isArray(value) && (keyword === "required" || keyword === "type");
    const role: Role | undefined = inherited === "kept" || keyword === "enum" ||
        keyword === "const" || listed || (inherited === "lists" && Array.isArray(value))
      ? "kept"
      : keyword === "dependentRequired" || keyword === "dependencies"
      ? "lists"
      : keyword !== undefined && NAME_MAPS.has(keyword)
      ? "names"
      : undefined;
    if (typeof value === "object" && value !== null) {
      if (role !== undefined) roles.set(value, role);
      else if (keyword !== undefined && !SCHEMA_KEYWORDS.has(keyword)) return visibleData(value);
      return COPY;
    }
    if (typeof value !== "string" || role === "kept") return COPY;
    return keyword !== undefined && CHECKED_STRINGS.has(keyword) ? COPY : withoutInvisible(value);
  }) as Record<string, unknown>;
  if (schema.type === undefined) schema.type = "object";
  if (schema.type === "object" && schema.properties === undefined) schema.properties = {};
  return schema;
}

/**
 * `value` (data in a schema: a default, examples, a keyword of the server's own) without the
 * characters that draw as nothing, in its strings and its keys alike; null when it cannot be
 * written as JSON (nested too deep). Those characters occur in JSON text only inside strings.
 */
function visibleData(value: object): unknown {
  try {
    return JSON.parse(withoutInvisible(JSON.stringify(value)));
  } catch {
    return null;
  }
}

/**
 * What an array or object of a schema holds, for {@linkcode modelSchema}: values a call is
 * checked against (`kept`), schemas by name (`names`), or by name schemas or lists of names
 * (`lists`: `dependencies`).
 */
type Role = "kept" | "names" | "lists";

/** Keywords whose value maps names to schemas. */
const NAME_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);

/** Keywords whose value is a schema or a list of schemas (any other object is data). */
const SCHEMA_KEYWORDS = new Set([
  "items",
  "prefixItems",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "if",
  "then",
  "else",
  "not",
  "allOf",
  "anyOf",
  "oneOf",
  "contentSchema",
]);

/** Keywords whose string value a call is checked against (beside `enum` and `const`). */
const CHECKED_STRINGS = new Set([
  "type",
  "pattern",
  "format",
  "const",
  "$ref",
  "$id",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "contentEncoding",
  "contentMediaType",
]);

/** Ajv's pluggable regular expressions (its package root does not export the names). */
type RegExpEngine = NonNullable<NonNullable<Options["code"]>["regExp"]>;
type RegExpLike = ReturnType<RegExpEngine>;

/** What {@linkcode compile} needs, loaded on the first call of any MCP tool. */
interface Validation {
  Ajv: typeof Ajv;
  addFormats: (ajv: Ajv) => unknown;
  regExp: RegExpEngine;
}

let validation: Promise<Validation> | undefined;

/**
 * A validator for `schema`; a schema Ajv cannot compile is left to the server to check. Ajv
 * loads on the first call of any MCP tool, not when the servers start.
 *
 * Each schema gets an Ajv instance of its own (about 0.6 ms, beside 1–2 ms for the compile, once
 * per tool on its first call): a shared one keeps every schema it compiled, by `$id`, for as
 * long as tern runs, so one server's schema could answer for another's `$id` or `$ref`, and a
 * second compile of an `$id` throws. Stripping `$id`s instead would have to tell keywords from
 * property names and data, and would break the `$ref`s that use them; only a root `$id` Ajv
 * refuses (`urn:shared`, a URN without a namespace) is dropped, rather than the whole check.
 * `uniqueItems` is left to the server: Ajv's check takes time quadratic in the model's array; so
 * is a schema with more than {@linkcode MAX_CHECKED_PATTERNS} patterns of property names.
 */
async function compile(schema: JsonSchema): Promise<(args: unknown) => string | undefined> {
  if (propertyPatterns(schema) > MAX_CHECKED_PATTERNS) return () => undefined;
  validation ??= loadValidation();
  const { Ajv, addFormats, regExp } = await validation;
  const compiled = (schema: JsonSchema) => {
    const ajv = new Ajv({
      strict: false,
      validateFormats: true,
      validateSchema: false,
      allErrors: true,
      // Ajv's warnings (an unknown format, say) are about the server's schema; never printed.
      logger: false,
      code: { regExp },
    });
    addFormats(ajv);
    // Ajv compares every pair of items that are not all of one scalar type: 20,000 small arrays
    // held tern 3 s, and what a model may write, minutes. Left to the server to check.
    ajv.removeKeyword("uniqueItems");
    const check = ajv.compile(schema);
    return (args: unknown) =>
      check(args) ? undefined : ajv.errorsText(check.errors) || "does not match the input schema";
  };
  try {
    return compiled(schema);
  } catch {
    if (!("$id" in schema)) return () => undefined;
  }
  try {
    const { $id: _dropped, ...rest } = schema;
    return compiled(rest);
  } catch {
    return () => undefined;
  }
}

/**
 * Most `patternProperties` patterns a schema checked here may have. Each key of the model's
 * objects is matched against each pattern, in tern's own thread: 2,000 patterns (a 55 KB schema)
 * took 6 s to compile and 6 s more to check 5,000 keys.
 */
export const MAX_CHECKED_PATTERNS = 100;

/** How many `patternProperties` patterns `schema` has (a property so named counts too). */
function propertyPatterns(schema: JsonSchema): number {
  let count = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== "object" || next === null) continue;
    const patterns = (next as Record<string, unknown>).patternProperties;
    if (!Array.isArray(next) && typeof patterns === "object" && patterns !== null) {
      count += Object.keys(patterns).length;
    }
    for (const child of Object.values(next)) stack.push(child);
  }
  return count;
}

async function loadValidation(): Promise<Validation> {
  const [{ Ajv }, formats, { RE2JS }] = await Promise.all([
    import("ajv"),
    import("ajv-formats"),
    import("re2js"),
  ]);
  // A CommonJS module: the plugin is `module.exports`, whose `default` is the plugin again; only
  // that path has both the value and its type under Deno.
  return { Ajv, addFormats: formats.default.default, regExp: linearRegExp(RE2JS) };
}

/**
 * Ajv's engine for `pattern` and `patternProperties`: RE2JS, which matches in time linear in
 * the text. The schema is the server's and the text the model's, so V8's backtracking RegExp
 * could take hours on one call (`^(a+)+$` against 40 `a`s and a `b`), synchronously in tern's
 * process. A pattern RE2 does not support (backreferences, lookaround) matches everything: that
 * keyword is left to the server to check, rather than the tool failing.
 */
function linearRegExp(re2: typeof RE2JS): RegExpEngine {
  const engine = (pattern: string): RegExpLike => {
    let compiled: RE2JS | undefined;
    try {
      compiled = re2.compile(jsWhitespace(re2.translateRegExp(pattern)));
    } catch {
      compiled = undefined;
    }
    const like: RegExpLike & { toString(): string } = {
      test: (text) => compiled?.test(text) ?? true,
      // Ajv shares one compiled pattern among patterns with the same string.
      toString: () => `re2:${pattern}`,
    };
    return like;
  };
  return Object.assign(engine, { code: "re2" });
}

/** JavaScript's `\s` (Unicode spaces, line and paragraph separators, BOM); RE2's is ASCII only. */
const SPACE = "\\t\\n\\x0B\\f\\r\\p{Zs}\\x{2028}\\x{2029}\\x{FEFF}";

/**
 * `pattern` (RE2 syntax) with `\s` and `\S` meaning what they mean in JavaScript, so a string
 * with a no-break space is not refused where the server's JavaScript or Python would take it.
 * `\S` inside a class stays RE2's, which also takes the spaces beyond ASCII.
 */
function jsWhitespace(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "\\" && i + 1 < pattern.length) {
      const next = pattern[++i];
      if (next === "s") out += inClass ? SPACE : `[${SPACE}]`;
      else if (next === "S" && !inClass) out += `[^${SPACE}]`;
      else out += char + next;
      continue;
    }
    if (char === "[" && !inClass) inClass = true;
    else if (char === "]" && inClass) inClass = false;
    out += char;
  }
  return out;
}

function callFailure(name: string, error: unknown): Observation {
  if (error instanceof McpCallError) {
    const code = error.kind === "timeout"
      ? "TIMEOUT"
      : error.kind === "cancelled"
      ? "CANCELLED"
      : "EXECUTION_FAILED";
    return { status: "ERROR", code, message: error.message };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { status: "ERROR", code: "EXECUTION_FAILED", message: `"${name}" failed: ${detail}` };
}

function cancelled(name: string): Observation {
  return { status: "ERROR", code: "CANCELLED", message: `Tool "${name}" was cancelled` };
}
