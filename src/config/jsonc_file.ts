/**
 * Parses and validates one `config.jsonc`. jsonc-parser and zod are imported here on first use,
 * so runs without config files, or with files of plain keys only, never load them.
 */
import { closestName } from "../core/edit_distance.ts";
import type { Node, ParseError } from "jsonc-parser";
import type { FileIssue } from "./file_schema.ts";
import { ConfigError, formatValue, jsoncSyntaxMessage, lineColumnAt } from "./errors.ts";
import { parsePlainConfig } from "./_plain_config.ts";
import { deeperThanAt, MAX_JSONC_DEPTH } from "./jsonc_depth.ts";
import { checkSetting, isSecretKeyName, STRUCTURED_KEYS } from "./schema.ts";
import { SETTING_KEYS, type SettingKey, SETTINGS, type Settings } from "./settings.ts";
import { invalidSetting } from "./sources.ts";

/** Whose file it is: the person's own or the project's. */
export type FileLayer = "user" | "project";

/**
 * Parses the JSONC `text` of config file `file` (used only in messages) into validated
 * settings. A file holding only whitespace and comments is an empty config. A file of valid
 * plain keys takes a quick path (`parsePlainConfig`) with the same result as the full check.
 * @throws {ConfigError} for a syntax error, arrays and objects nested more than
 *   {@linkcode MAX_JSONC_DEPTH} levels, a non-object top level, a key holding a secret, an
 *   unknown key or an invalid value: the first in file order, with its line and column.
 */
export async function parseConfigFile(
  text: string,
  file: string,
  layer: FileLayer = "user",
): Promise<Settings> {
  return parsePlainConfig(withoutBom(text)) ?? await checkConfigFile(text, file, layer);
}

/**
 * {@linkcode parseConfigFile} without the quick path: jsonc-parser and the zod schema always.
 * @throws {ConfigError} as parseConfigFile does.
 */
export async function checkConfigFile(
  text: string,
  file: string,
  layer: FileLayer = "user",
): Promise<Settings> {
  const [jsonc, { configFileSchema, describeFileIssue }] = await Promise.all([
    import("jsonc-parser"),
    import("./file_schema.ts"),
  ]);
  const source = withoutBom(text);
  const fail = (detail: string, offset?: number, key?: string): never => {
    const position = offset === undefined ? undefined : lineColumnAt(source, offset);
    const where = position ? `line ${position.line}, column ${position.column}: ` : "";
    throw new ConfigError(`Invalid config file "${file}": ${where}${detail}`, {
      file,
      key,
      ...position,
    });
  };

  // jsonc-parser and the checks after it recurse once per level: bounded before any of them.
  const tooDeep = deeperThanAt(jsonc, source);
  if (tooDeep !== undefined) {
    return fail(
      `arrays and objects are nested more than ${MAX_JSONC_DEPTH} levels deep; ` +
        "no setting needs more than a few levels",
      tooDeep,
    );
  }
  const errors: ParseError[] = [];
  const root = jsonc.parseTree(source, errors, { allowTrailingComma: true });
  if (root === undefined && jsonc.stripComments(source).trim() === "") return {};
  if (errors.length > 0 || root === undefined) {
    const first = errors[0];
    const name = first ? jsonc.printParseErrorCode(first.error) : "ValueExpected";
    return fail(jsoncSyntaxMessage(name), first?.offset ?? 0);
  }
  if (root.type !== "object") {
    const got = formatValue(jsonc.getNodeValue(root));
    return fail(`expected an object at the top level, got ${got}`, root.offset);
  }

  const lost = lostKey(root);
  if (lost !== undefined) {
    const where = lost.path.length > 0 ? ` in ${formatValue(lost.path.join("."))}` : "";
    return fail(
      lost.name === "__proto__"
        ? `key "__proto__"${where} would be dropped without a word: use another name`
        : `key ${formatValue(lost.name)}${where} is given twice: only the last would count, ` +
          "so keep one",
      lost.offset,
      lost.name,
    );
  }
  for (const property of root.children ?? []) {
    checkProperty(property, jsonc.getNodeValue, fail, (key, value, offset) => {
      throw invalidSetting(key, { layer, file }, value, lineColumnAt(source, offset));
    });
  }
  const parsed = configFileSchema.safeParse(jsonc.getNodeValue(root));
  if (parsed.success) return parsed.data;
  const issue = describeFileIssue(parsed.error);
  return fail(issue.detail, issueOffset(jsonc, root, issue), issue.unknownKey);
}

/**
 * Where in the file a schema issue is: the key whose name is at fault (unknown, or a name the
 * key refuses), else the value at the issue's path, else the nearest value above it that is
 * there (the object lacking a required field).
 */
function issueOffset(jsonc: Jsonc, root: Node, issue: FileIssue): number {
  let path = issue.path.filter((step) => typeof step !== "symbol") as Array<string | number>;
  let name = issue.unknownKey;
  if (issue.badName && path.length > 0) [path, name] = [path.slice(0, -1), String(path.at(-1))];
  for (let length = path.length; length >= 0; length--) {
    const node = jsonc.findNodeAtLocation(root, path.slice(0, length));
    if (node === undefined) continue;
    if (length === path.length && name !== undefined && node.type === "object") {
      const property = node.children?.find((child) => child.children?.[0]?.value === name);
      if (property?.children?.[0] !== undefined) return property.children[0].offset;
    }
    return node.offset;
  }
  return root.offset;
}

/**
 * The first key of `root` (at any depth, in file order) whose value would not count: one given
 * again later in the same object (the later wins, so a reader of the first is misled), or
 * `__proto__`, which the schema drops. Recursion is bounded: the file nests at most
 * {@linkcode MAX_JSONC_DEPTH} levels.
 */
function lostKey(
  root: Node,
  path: string[] = [],
): { name: string; path: string[]; offset: number } | undefined {
  const seen = new Set<string>();
  for (const [index, child] of (root.children ?? []).entries()) {
    if (root.type === "array") {
      const lost = lostKey(child, [...path, String(index)]);
      if (lost !== undefined) return lost;
      continue;
    }
    const [keyNode, valueNode] = child.children ?? [];
    if (keyNode === undefined) continue;
    const name = String(keyNode.value);
    if (seen.has(name) || name === "__proto__") return { name, path, offset: keyNode.offset };
    seen.add(name);
    const lost = valueNode === undefined ? undefined : lostKey(valueNode, [...path, name]);
    if (lost !== undefined) return lost;
  }
  return undefined;
}

/**
 * Line and column of the top-level key `key` in config file text `text` (the last, should it be
 * given twice); undefined when it is not there. For messages about a file already parsed.
 */
export async function keyPosition(
  text: string,
  key: string,
): Promise<{ line: number; column: number } | undefined> {
  const jsonc = await import("jsonc-parser");
  const source = withoutBom(text);
  if (deeperThanAt(jsonc, source) !== undefined) return undefined;
  const root = jsonc.parseTree(source, [], { allowTrailingComma: true });
  const named = (root?.children ?? []).filter((property) => property.children?.[0]?.value === key);
  const node = named.at(-1)?.children?.[0];
  return node === undefined ? undefined : lineColumnAt(source, node.offset);
}

/** A byte order mark is invisible to the reader, so offsets (and columns) start after it. */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

type Fail = (detail: string, offset?: number, key?: string) => never;
type Jsonc = typeof import("jsonc-parser");

function checkProperty(
  property: Node,
  valueOf: (node: Node) => unknown,
  fail: Fail,
  invalid: (key: SettingKey, value: unknown, offset: number) => never,
): void {
  const [keyNode, valueNode] = property.children ?? [];
  if (keyNode === undefined || valueNode === undefined) return;
  const name = String(keyNode.value);
  if (isSecretKeyName(name)) {
    fail(
      `key ${formatValue(name)}: config files must not hold API keys; put the key in ` +
        `TERN_API_KEY in the environment or .env, or name the variable that holds it with ` +
        `"apiKeyEnv"`,
      keyNode.offset,
      name,
    );
  }
  if ((STRUCTURED_KEYS as readonly string[]).includes(name)) return;
  if (!Object.hasOwn(SETTINGS, name)) {
    const suggestion = closestKey(name);
    const hint = suggestion ? `: did you mean "${suggestion}"?` : "";
    // Quoted as JSON: a repository's key name may hold a line break, which would start a line.
    fail(`unknown key ${formatValue(name)}${hint}`, keyNode.offset, name);
  }
  const key = name as SettingKey;
  const value = valueOf(valueNode);
  if (!checkSetting(key, value).ok) invalid(key, value, valueNode.offset);
}

/** The known key closest to a misspelt one, if any is within two edits (case ignored). */
function closestKey(name: string): string | undefined {
  return closestName(name, SETTING_KEYS, 3);
}
