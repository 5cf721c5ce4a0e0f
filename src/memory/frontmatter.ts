/**
 * YAML frontmatter of a Markdown resource (a skill's SKILL.md, a prompt template): the block
 * between a first line `---` and the next line `---`. A block of plain `key: value` lines (the
 * usual `name` and `description`), with `key: [a, b]` lists of plain words, is read here; any
 * other YAML is parsed with the `yaml` package, loaded only then (its import costs about as much
 * as Deno's own start: bench/results/resources.md), so that the common case never pays it.
 */
import { nestsDeeperThan } from "../core/json_depth.ts";

/**
 * Lists and mappings inside one another at most this deep in a frontmatter block: far more than
 * any skill or template uses, and little enough for any later walk or `JSON.stringify` of it.
 */
export const MAX_FRONTMATTER_DEPTH = 64;

/** A file's frontmatter and the Markdown after it. */
export interface Frontmatter {
  /** The parsed block: an object of keys (empty when the file has no block). */
  data: Record<string, unknown>;
  /** The text after the block. */
  body: string;
}

/** A frontmatter block that is not a YAML mapping; `line` is 1-based in the file. */
export class FrontmatterError extends Error {
  override name = "FrontmatterError";
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, detail: string) {
    super(`Cannot read the frontmatter of "${file}" at line ${line}: ${detail}`);
    this.file = file;
    this.line = line;
  }
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

/**
 * Splits `text` (the content of `file`) into its frontmatter and body.
 * @throws {FrontmatterError} naming the file and line when the block is not closed, is not a
 *   YAML mapping, or is YAML the `yaml` package refuses for any reason (a syntax error, more
 *   than 16 aliases, nesting that overflows its parser), or whose lists and mappings nest more
 *   than {@linkcode MAX_FRONTMATTER_DEPTH} levels or contain themselves.
 */
export async function parseFrontmatter(text: string, file: string): Promise<Frontmatter> {
  const open = OPEN.exec(text);
  if (open === null) return { data: {}, body: text };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) throw new FrontmatterError(file, 1, "the `---` block is never closed");
  const block = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  const simple = simpleBlock(block);
  if (simple !== undefined) return { data: simple, body };
  const { parse, YAMLParseError } = await import("yaml");
  let data: unknown;
  try {
    data = parse(block, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 16 });
  } catch (error) {
    // Whatever the package throws (a syntax error, too many aliases, too deep a nesting) is
    // this one file's fault, so the file is skipped with its name and tern goes on.
    const message = error instanceof Error ? error.message : String(error);
    // The block starts on the file's line 2.
    const line = error instanceof YAMLParseError ? (error.linePos?.[0]?.line ?? 1) + 1 : 2;
    throw new FrontmatterError(file, line, message.split("\n")[0].replace(/ at line.*$/, ""));
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new FrontmatterError(file, 2, "it is not a mapping of keys (`name: value` lines)");
  }
  // An alias inside its own anchor (`&a [*a]`) makes the data contain itself: endlessly deep.
  if (nestsDeeperThan(data, MAX_FRONTMATTER_DEPTH)) {
    throw new FrontmatterError(
      file,
      2,
      `its lists and mappings nest more than ${MAX_FRONTMATTER_DEPTH} levels deep, or an ` +
        "alias refers to the list or mapping it is in",
    );
  }
  return { data: data as Record<string, unknown>, body };
}

const SIMPLE_LINE = /^([A-Za-z_][\w-]*):(?:[ \t]+(.*?))?[ \t]*$/;
/** A plain scalar YAML reads as this same string: no indicator first, no `: ` or ` #` inside. */
const PLAIN = /^(?![-?:,[\]{}#&*!|>'"%@`\s])(?:(?!: | #)[^\t\n])*$/;
/** Plain scalars that YAML reads as something else than a string. */
const NOT_A_STRING = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+.\d].*)$/;

/**
 * The block read without the `yaml` package when every line is blank, a `# comment`, a
 * `key: plain value` or a `key: [plain, words]`, each key once; undefined for anything else
 * (the package then parses it, and reports errors with their line).
 */
function simpleBlock(block: string): Record<string, unknown> | undefined {
  const data: Record<string, unknown> = {};
  for (const line of block.split(/\r?\n/)) {
    if (/^\s*(?:#.*)?$/.test(line)) continue;
    const match = SIMPLE_LINE.exec(line);
    if (match === null || Object.hasOwn(data, match[1])) return undefined;
    const value = match[2] ?? "";
    if (value === "") return undefined;
    const list = /^\[(.*)\]$/.exec(value);
    if (list !== null) {
      const items = list[1].trim() === "" ? [] : list[1].split(",").map((item) => item.trim());
      if (!items.every((item) => plainString(item) && !item.includes(","))) return undefined;
      data[match[1]] = items;
    } else if (plainString(value)) {
      data[match[1]] = value;
    } else {
      return undefined;
    }
  }
  return data;
}

function plainString(value: string): boolean {
  return value !== "" && PLAIN.test(value) && !NOT_A_STRING.test(value) && !value.includes("{{");
}

/** The string value of `key` in `data`, trimmed; undefined when absent or not a string. */
export function stringField(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
