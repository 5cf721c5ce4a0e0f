/**
 * Small pieces of MCP config handling: key paths for messages, `${VAR}` expansion and the
 * fingerprint that `tern mcp trust` records.
 */
import type { McpScope } from "./types.ts";

/** A position in a JSON document: object keys and array indexes. */
export type KeyPath = readonly (string | number)[];

const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Renders a key path for messages: `mcpServers.github.args[0]`, `servers["my.server"]`. */
export function formatKeyPath(path: KeyPath): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (PLAIN_SEGMENT.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** Why a string could not be expanded; the caller adds the file and key. */
export type ExpansionProblem =
  | { kind: "unset"; name: string }
  | { kind: "malformed"; reference: string };

const REFERENCE_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([^]*))?$/;

/**
 * Replaces `${NAME}` with the variable's value and `${NAME:-default}` with the value, or with
 * `default` when the variable is unset or empty (as in a POSIX shell). A `$` not followed by
 * `{` is literal; there is no escape for a literal `${`.
 * @returns the expanded text, or the first problem: an unset variable without a default, or a
 *   `${` that does not start a well-formed reference.
 */
export function expandVariables(
  text: string,
  env: (name: string) => string | undefined,
): { ok: true; value: string } | { ok: false; problem: ExpansionProblem } {
  let result = "";
  let position = 0;
  for (;;) {
    const start = text.indexOf("${", position);
    if (start < 0) break;
    const end = text.indexOf("}", start + 2);
    const match = end < 0 ? null : REFERENCE_BODY.exec(text.slice(start + 2, end));
    if (match === null) {
      const reference = end < 0 ? text.slice(start) : text.slice(start, end + 1);
      return { ok: false, problem: { kind: "malformed", reference } };
    }
    const [, name, fallback] = match;
    const value = env(name);
    let replacement: string;
    if (fallback !== undefined) replacement = value ? value : fallback;
    else if (value !== undefined) replacement = value;
    else return { ok: false, problem: { kind: "unset", name } };
    result += text.slice(position, start) + replacement;
    position = end + 1;
  }
  return { ok: true, value: result + text.slice(position) };
}

/**
 * SHA-256 (lowercase hex) of `definition` and `scope` as canonical JSON: object keys sorted at
 * every level, no whitespace. So reformatting a file or reordering keys keeps the fingerprint;
 * any change of a value changes it.
 */
export async function fingerprintDefinition(definition: unknown, scope: McpScope): Promise<string> {
  const text = canonicalJson({ definition, scope });
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    return `{${
      keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")
    }}`;
  }
  return JSON.stringify(value) ?? "null";
}
