/**
 * JSON from outside (a web page's answer, an MCP server's structured result) indented for the
 * model, with bounded work: `JSON.stringify(value, null, 2)` indents every level by two more
 * spaces, so a small answer nested thousands deep (9 KB at 4,500 levels) becomes tens of
 * megabytes in tern's own process, and many of them gigabytes.
 */
import { nestsDeeperThan } from "./json_depth.ts";

/** The most characters an indented form may take. */
export const MAX_INDENTED_CHARS = 2_000_000;
/** Nesting deeper than this is not indented: it is shown compact (as sent). */
export const MAX_INDENTED_DEPTH = 64;

/** What {@linkcode indentedJson} shows past {@linkcode MAX_INDENTED_CHARS}. */
export type Overflow =
  /** The indented text up to the limit, and a line saying the rest is not shown. */
  | "cut"
  /** The whole value compact (as long as what was sent), not indented. */
  | "compact";

/**
 * `value` (parsed JSON; `raw` is the text it was parsed from, when there is one) indented by
 * two spaces, as `JSON.stringify(value, null, 2)` does, unless it nests deeper than
 * {@linkcode MAX_INDENTED_DEPTH} (then compact: `raw`, or the value written without spaces) or
 * its indented form passes {@linkcode MAX_INDENTED_CHARS} (then as `overflow` says). Never
 * throws: a value too deep even to write compact is described instead.
 */
export function indentedJson(value: unknown, overflow: Overflow, raw?: string): string {
  const deep = raw === undefined
    ? nestsDeeperThan(value, MAX_INDENTED_DEPTH)
    : depthOf(raw) > MAX_INDENTED_DEPTH;
  if (deep) return raw ?? compact(value);
  const parts: string[] = [];
  let used = 0;
  const add = (text: string) => {
    parts.push(text);
    used += text.length;
    return used < MAX_INDENTED_CHARS;
  };
  const write = (item: unknown, indent: string): boolean => {
    if (item === null || typeof item !== "object") return add(JSON.stringify(item) ?? "null");
    const inner = `${indent}  `;
    const entries = Array.isArray(item)
      ? item.map((element) => [undefined, element] as const)
      : Object.entries(item).map(([key, element]) => [key, element] as const);
    const [open, close] = Array.isArray(item) ? ["[", "]"] : ["{", "}"];
    if (entries.length === 0) return add(`${open}${close}`);
    if (!add(`${open}\n`)) return false;
    for (const [index, [key, element]] of entries.entries()) {
      if (!add(key === undefined ? inner : `${inner}${JSON.stringify(key)}: `)) return false;
      if (!write(element, inner)) return false;
      if (!add(index < entries.length - 1 ? ",\n" : "\n")) return false;
    }
    return add(`${indent}${close}`);
  };
  if (write(value, "")) return parts.join("");
  if (overflow === "compact") return raw ?? compact(value);
  parts.push("\n[... the rest of the JSON is not shown]");
  return parts.join("");
}

/** `value` written without spaces; a description when even that overflows the stack. */
function compact(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return "[JSON nested too deeply to show]";
  }
}

/** How deep `json` nests arrays and objects, by its brackets outside strings. */
function depthOf(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const char = json[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth--;
  }
  return deepest;
}
