/**
 * YAML frontmatter of a Markdown resource (a skill's SKILL.md, a prompt template): the block
 * between a first line `---` and the next line `---`, parsed with the `yaml` package, loaded at
 * the first file that has such a block.
 */

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
 * @throws {FrontmatterError} naming the file and line when the block is not closed or is not a
 *   YAML mapping.
 */
export async function parseFrontmatter(text: string, file: string): Promise<Frontmatter> {
  const open = OPEN.exec(text);
  if (open === null) return { data: {}, body: text };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (close === null) throw new FrontmatterError(file, 1, "the `---` block is never closed");
  const block = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  const { parse, YAMLParseError } = await import("yaml");
  let data: unknown;
  try {
    data = parse(block, { prettyErrors: true, uniqueKeys: true, maxAliasCount: 16 });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      // The block starts on the file's line 2.
      const line = (error.linePos?.[0]?.line ?? 1) + 1;
      throw new FrontmatterError(
        file,
        line,
        error.message.split("\n")[0].replace(/ at line.*$/, ""),
      );
    }
    throw error;
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new FrontmatterError(file, 2, "it is not a mapping of keys (`name: value` lines)");
  }
  return { data: data as Record<string, unknown>, body };
}

/** The string value of `key` in `data`, trimmed; undefined when absent or not a string. */
export function stringField(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
