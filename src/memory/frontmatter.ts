/**
 * YAML frontmatter of a Markdown resource (a skill's SKILL.md, a prompt template): the block
 * between a first line `---` and the next line `---`. A block of plain `key: value` lines (the
 * usual `name` and `description`), with `key: [a, b]` lists of plain words, is read here; any
 * other YAML is parsed with the `yaml` package, loaded only then (its import costs about as much
 * as Deno's own start: bench/results/resources.md), so that the common case never pays it.
 *
 * Resources are read again every turn, so what the package parsed is kept for the process, by
 * file and a digest of the block: an unchanged block is never parsed twice, and a changed one
 * (whatever its size and time stamp) always is. A block longer than
 * {@linkcode MAX_FRONTMATTER_CHARS} is refused before any parsing, and the package's time over
 * all blocks of a process is bounded ({@linkcode frontmatterBudget}).
 *
 * The file's text has lost its invisible characters before it gets here (`instructions` in
 * src/config/workspace_file.ts), but YAML writes any character as an escape (`"\U000E0049"`,
 * `"\u202e"`): the strings the package parsed lose them again, so a description or a default
 * brings the model nothing a person reading the file cannot see.
 */
import { nestsDeeperThan } from "../core/json_depth.ts";
import { withoutInvisible } from "../core/invisible_text.ts";

/**
 * Lists and mappings inside one another at most this deep in a frontmatter block: far more than
 * any skill or template uses, and little enough for any later walk or `JSON.stringify` of it.
 */
export const MAX_FRONTMATTER_DEPTH = 64;

/**
 * The longest frontmatter block read, in characters (16 KB of ASCII): more than any skill or
 * template needs, and little enough that parsing it stays quick whatever YAML it holds (200
 * templates of 128 KB of flow-style YAML took 41 s to parse).
 */
export const MAX_FRONTMATTER_CHARS = 16 * 1024;

/** Blocks parsed by the `yaml` package that are kept; past it, the oldest is dropped. */
const MAX_CACHED_BLOCKS = 2_048;

type Parsed = { data: Record<string, unknown> } | { error: FrontmatterError };

/** What the `yaml` package made of each block, by file and digest (see the module notes). */
const cache = new Map<string, Parsed>();

/** How many blocks the `yaml` package parsed in this process: what tests observe the cache by. */
export const frontmatterParses = { count: 0 };

/**
 * The most time, in ms, the `yaml` package may take over the blocks one process parses, for the
 * person's own files and for the repository's, each (`spent` counts it). A block of 16 KB can
 * take half a second, and a repository can hold hundreds of skills and templates, read at every
 * start: past the budget, a block that needs the package is refused with a message instead
 * (plain `key: value` blocks are still read). A repository's files never spend the person's.
 */
export const frontmatterBudget = { ms: 2_000, spent: { person: 0, repository: 0 } };

/** Whose file a header is: the person's own (their home), or the repository's. */
export type HeaderOwner = keyof typeof frontmatterBudget.spent;

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
 * Splits `text` (the content of `file`, `owner`'s) into its frontmatter and body.
 * @throws {FrontmatterError} naming the file and line when the block is not closed, is longer
 *   than {@linkcode MAX_FRONTMATTER_CHARS}, is not a YAML mapping, or is YAML the `yaml` package
 *   refuses for any reason (a syntax error, more than 16 aliases, nesting that overflows its
 *   parser), or whose lists and mappings nest more than {@linkcode MAX_FRONTMATTER_DEPTH} levels
 *   or contain themselves.
 */
export async function parseFrontmatter(
  text: string,
  file: string,
  owner: HeaderOwner = "repository",
): Promise<Frontmatter> {
  const open = OPEN.exec(text);
  if (open === null) return { data: {}, body: text };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) throw new FrontmatterError(file, 1, "the `---` block is never closed");
  const block = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  if (block.length > MAX_FRONTMATTER_CHARS) {
    throw new FrontmatterError(
      file,
      1,
      `the block is longer than ${MAX_FRONTMATTER_CHARS.toLocaleString("en-US")} characters, ` +
        "more than any frontmatter needs",
    );
  }
  const simple = simpleBlock(block);
  if (simple !== undefined) return { data: simple, body };
  const key = `${file}\0${await digest(block)}`;
  let parsed = cache.get(key);
  if (parsed === undefined) {
    if (frontmatterBudget.spent[owner] >= frontmatterBudget.ms) {
      const whose = owner === "person" ? "your own" : "the repository's";
      throw new FrontmatterError(
        file,
        2,
        `not read: tern spent its ${frontmatterBudget.ms / 1000} s for YAML headers of ` +
          `${whose} files in this run on others; write this one as plain \`key: value\` lines`,
      );
    }
    const started = performance.now();
    parsed = await parseYaml(block, file);
    frontmatterBudget.spent[owner] += performance.now() - started;
    if (cache.size >= MAX_CACHED_BLOCKS) cache.delete(cache.keys().next().value!);
    cache.set(key, parsed);
  }
  if ("error" in parsed) throw parsed.error;
  // A copy at the top: a caller that adds or removes a key changes nothing kept.
  return { data: { ...parsed.data }, body };
}

async function digest(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** `block` parsed by the `yaml` package, or the error naming `file` and the line. */
async function parseYaml(block: string, file: string): Promise<Parsed> {
  const { parse, YAMLParseError } = await import("yaml");
  frontmatterParses.count++;
  let data: unknown;
  try {
    // logLevel "error": the package reports warnings (an unknown tag, a key that is a list)
    // through `process.emitWarning`, which writes their text, escape sequences and all, to
    // stderr past tern's own warnings, over the interactive screen.
    data = parse(block, {
      prettyErrors: true,
      uniqueKeys: true,
      maxAliasCount: 16,
      logLevel: "error",
    });
  } catch (error) {
    // Whatever the package throws (a syntax error, too many aliases, too deep a nesting) is
    // this one file's fault, so the file is skipped with its name and tern goes on.
    const message = error instanceof Error ? error.message : String(error);
    // The block starts on the file's line 2.
    const line = error instanceof YAMLParseError ? (error.linePos?.[0]?.line ?? 1) + 1 : 2;
    return {
      error: new FrontmatterError(file, line, message.split("\n")[0].replace(/ at line.*$/, "")),
    };
  }
  if (data === null || data === undefined) return { data: {} };
  if (typeof data !== "object" || Array.isArray(data)) {
    return {
      error: new FrontmatterError(file, 2, "it is not a mapping of keys (`name: value` lines)"),
    };
  }
  // An alias inside its own anchor (`&a [*a]`) makes the data contain itself: endlessly deep.
  if (nestsDeeperThan(data, MAX_FRONTMATTER_DEPTH)) {
    return {
      error: new FrontmatterError(
        file,
        2,
        `its lists and mappings nest more than ${MAX_FRONTMATTER_DEPTH} levels deep, or an ` +
          "alias refers to the list or mapping it is in",
      ),
    };
  }
  return { data: visibleStrings(data) as Record<string, unknown> };
}

/**
 * `value` with every string in its lists and mappings passed through `withoutInvisible` (keys
 * stay: they are looked up, never shown to the model). Other values (numbers, dates) stay.
 */
function visibleStrings(value: unknown): unknown {
  if (typeof value === "string") return withoutInvisible(value);
  if (Array.isArray(value)) return value.map(visibleStrings);
  if (
    value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype
  ) {
    return value;
  }
  // Own data properties, as the package made them (a `__proto__` key stays a key).
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: visibleStrings(item),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A `key:` at the start of a line; what follows is looked at without a pattern (see below). */
const SIMPLE_KEY = /^[A-Za-z_][\w-]*:/;
/** Characters some readers take as a line break: a line holding one is left to the package. */
const OTHER_BREAK = /[\r\u0085\u2028\u2029]/;
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
    if (OTHER_BREAK.test(line)) return undefined;
    if (/^\s*(?:#.*)?$/.test(line)) continue;
    // The key by a pattern, the value by trimming: a pattern that also trims the value (lazy
    // `.*?` between runs of blanks) backtracks cubically on a long run of blanks that does not
    // end the line, minutes for one 16 KB header.
    const key = SIMPLE_KEY.exec(line)?.[0].slice(0, -1);
    if (key === undefined || Object.hasOwn(data, key)) return undefined;
    const after = line.slice(key.length + 1);
    if (after !== "" && after[0] !== " " && after[0] !== "\t") return undefined;
    const value = trimBlanks(after);
    if (value === "") return undefined;
    const list = /^\[(.*)\]$/.exec(value);
    if (list !== null) {
      const items = list[1].trim() === "" ? [] : list[1].split(",").map((item) => item.trim());
      if (!items.every((item) => plainString(item) && !item.includes(","))) return undefined;
      data[key] = items;
    } else if (plainString(value)) {
      data[key] = value;
    } else {
      return undefined;
    }
  }
  return data;
}

/** `text` without the spaces and tabs at its ends, in one pass over each end. */
function trimBlanks(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === " " || text[start] === "\t")) start++;
  while (end > start && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  return text.slice(start, end);
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
