/**
 * Prompt templates: `prompts/*.md` under tern's home (the person's) and `<workspace>/.tern/`
 * (the project's; the person's own win on a name clash, so a repository cannot replace one). The
 * file name is the template's name; its frontmatter has a `description` and `args`, a list of
 * names (plain words: {@linkcode ARG_NAME}) or of `{name, description, default}`. `/name args`
 * renders it: `$1`…`$9` are the words given, `$ARGUMENTS` all of them, `{{name}}` a named
 * argument (given as `name=value`, or the next unnamed word, or its default).
 * An unknown or missing argument is a {@linkcode TemplateError}, and so is an extra word (one
 * beyond its args and its highest `$N`) unless the body takes them all with `$ARGUMENTS`.
 */
import { basename, isInside, join } from "../core/path.ts";
import { realPathOrNull } from "../core/verified_open.ts";
import { type ReadRefusal, readWorkspaceText } from "../config/workspace_file.ts";
import { FrontmatterError, parseFrontmatter, stringField } from "./frontmatter.ts";
import { listFolder } from "./bounded_walk.ts";
import { folderOutside, headerOwner, refuseFor, type ResourceLevel } from "./context_files.ts";
import { TemplateError } from "./errors.ts";

export { TemplateError };

/** The most templates read from one folder. */
export const MAX_TEMPLATES = 200;
/** The most entries of a prompts folder read. */
const MAX_TEMPLATE_ENTRIES = 2_000;
/** The most bytes of one template. */
export const MAX_TEMPLATE_BYTES = 128 * 1024;
/**
 * How many characters the placeholders of one template may put in beyond the arguments typed
 * (a `$1` used twice counts twice): a repository's 128 KB body of 65,536 `$1` would turn a
 * pasted argument of 8 KB into a message of 500 million characters, or crash tern.
 */
export const MAX_TEMPLATE_REPEAT_CHARS = 1_000_000;
/** A template name: what follows `/` in `/name`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** An argument name: a plain word, so that `/help` and error messages show it as it is. */
const ARG_NAME = /^[A-Za-z][\w-]{0,63}$/;
const PLACEHOLDER = /\$ARGUMENTS|\$(\d)|\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;

/** One declared argument. */
export interface TemplateArg {
  name: string;
  description?: string;
  /** Absent: the argument is required. */
  default?: string;
}

/** One template. */
export interface PromptTemplate {
  name: string;
  description: string;
  args: TemplateArg[];
  body: string;
  path: string;
  level: ResourceLevel;
}

/** The templates found, and what was wrong on the way. */
export interface TemplateIndex {
  templates: PromptTemplate[];
  diagnostics: string[];
}

/** Options of {@linkcode discoverTemplates}. */
export interface DiscoverTemplatesOptions {
  /**
   * False: the person's own templates are not read (a model server a project's files chose gets
   * nothing of theirs, and the project's template of the same name is used). Default true.
   */
  personal?: boolean;
}

/**
 * Reads the person's and the project's templates; the person's win on a name clash, and the
 * project's are read only where `refuse` lets the model read them (a template's body becomes a
 * message).
 */
export async function discoverTemplates(
  workspace: string,
  ternHome: string,
  refuse: ReadRefusal,
  options: DiscoverTemplatesOptions = {},
): Promise<TemplateIndex> {
  const diagnostics: string[] = [];
  const byName = new Map<string, PromptTemplate>();
  const folders: Array<[string, string, ResourceLevel]> = [
    [join(ternHome, "prompts"), ternHome, "user"],
    [join(workspace, ".tern", "prompts"), workspace, "project"],
  ];
  const home = realPathOrNull(ternHome);
  for (const [dir, confine, level] of folders) {
    if (level === "user" && options.personal === false) continue;
    // Tern's home is never the project's (tern started in the home folder has
    // `~/.tern/prompts` as its `.tern/prompts`): its templates are the person's, or not read.
    const real = level === "project" && home !== null ? realPathOrNull(dir) : null;
    if (home !== null && real !== null && isInside(home, real)) continue;
    const outside = folderOutside(confine, dir);
    if (outside !== undefined) {
      diagnostics.push(outside);
      continue;
    }
    for (const path of markdownFiles(dir, diagnostics)) {
      const template = await readTemplate(
        confine,
        path,
        level,
        diagnostics,
        refuseFor(level, refuse),
      );
      if (template === undefined) continue;
      const kept = byName.get(template.name);
      if (kept !== undefined) {
        diagnostics.push(
          `Prompt template "/${template.name}" in "${path}" is not used: "${kept.path}" ` +
            "takes precedence",
        );
        continue;
      }
      byName.set(template.name, template);
    }
  }
  const templates = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { templates, diagnostics };
}

function markdownFiles(dir: string, diagnostics: string[]): string[] {
  const listed = listFolder(dir, MAX_TEMPLATE_ENTRIES);
  if (listed === undefined) return [];
  if (!listed.complete) {
    diagnostics.push(
      `Prompt templates of "${dir}" are not all read: it holds more than ` +
        `${MAX_TEMPLATE_ENTRIES} entries`,
    );
  }
  let names = listed.entries
    .filter((entry) => !entry.isDirectory && entry.name.endsWith(".md"))
    .map((entry) => entry.name).sort();
  if (names.length > MAX_TEMPLATES) {
    diagnostics.push(`Only the first ${MAX_TEMPLATES} prompt templates of "${dir}" are read`);
    names = names.slice(0, MAX_TEMPLATES);
  }
  return names.map((name) => join(dir, name));
}

async function readTemplate(
  confine: string,
  path: string,
  level: ResourceLevel,
  diagnostics: string[],
  refuse: ReadRefusal | undefined,
): Promise<PromptTemplate | undefined> {
  const name = basename(path, ".md");
  if (!NAME.test(name)) {
    diagnostics.push(`Prompt template "${path}" is not used: "${name}" is not a command name`);
    return undefined;
  }
  let text: string | undefined;
  try {
    text = readWorkspaceText(confine, path, {
      what: "prompt template",
      instructions: true,
      warn: (line) => diagnostics.push(line),
      refuse,
      maxBytes: MAX_TEMPLATE_BYTES,
    });
  } catch (error) {
    diagnostics.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    const { data, body } = await parseFrontmatter(text, path, headerOwner(level));
    const args = templateArgs(data.args ?? data.arguments, path);
    const description = oneLine(stringField(data, "description") ?? firstLine(body));
    return { name, description, args, body, path, level };
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    diagnostics.push(error.message);
    return undefined;
  }
}

function templateArgs(value: unknown, path: string): TemplateArg[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new FrontmatterError(path, 2, "`args` must be a list of names or of {name, default}");
  }
  return value.map((item): TemplateArg => {
    if (typeof item === "string" && item.trim() !== "") return { name: argName(item, path) };
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      const fields = item as Record<string, unknown>;
      const name = stringField(fields, "name");
      if (name !== undefined) {
        return {
          name: argName(name, path),
          description: stringField(fields, "description"),
          default: fields.default === undefined || fields.default === null
            ? undefined
            : String(fields.default),
        };
      }
    }
    throw new FrontmatterError(
      path,
      2,
      `\`args\` has an entry without a name: ${JSON.stringify(item)}`,
    );
  });
}

/**
 * `name` when it is a plain word ({@linkcode ARG_NAME}): it is shown in `/help` and in error
 * messages as it is.
 * @throws {FrontmatterError} naming the file, with the name made visible, when it is not.
 */
function argName(name: string, path: string): string {
  const trimmed = name.trim();
  if (ARG_NAME.test(trimmed)) return trimmed;
  throw new FrontmatterError(
    path,
    2,
    `\`args\` has a name that is not a plain word (a letter, then up to 63 letters, digits, ` +
      `"_" or "-"): ${JSON.stringify(trimmed.slice(0, 80))}`,
  );
}

/** `text` on one line: whitespace and control characters (escape sequences' ESC) as spaces. */
function oneLine(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, " ").trim().slice(0, 1_024);
}

function firstLine(body: string): string {
  return body.trim().split("\n")[0]?.slice(0, 120) ?? "";
}

/**
 * Splits what follows `/name` into words: blanks separate them, and "double" or 'single'
 * quotes keep blanks inside one word.
 */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(/(?:"[^"]*"|'[^']*'|[^\s"']+)+/g)) {
    words.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, (_, a, b) => a ?? b));
  }
  return words;
}

/**
 * The text of `template` with `argText` (what follows `/name`) put in (see the module notes).
 * @throws {TemplateError} naming the argument when one is unknown, missing or extra, or when
 *   the placeholders repeat the arguments past {@linkcode MAX_TEMPLATE_REPEAT_CHARS}.
 */
export function renderTemplate(template: PromptTemplate, argText: string): string {
  const words = splitArgs(argText);
  const declared = new Map(template.args.map((arg) => [arg.name, arg]));
  const named = new Map<string, string>();
  const positional: string[] = [];
  for (const word of words) {
    const pair = /^([A-Za-z_][A-Za-z0-9_-]*)=(.*)$/s.exec(word);
    if (pair !== null && declared.size > 0) {
      if (!declared.has(pair[1])) {
        throw new TemplateError(
          `Unknown argument "${pair[1]}" for /${template.name}: it takes ${usage(template)}`,
        );
      }
      named.set(pair[1], pair[2]);
    } else {
      positional.push(word);
    }
  }
  const values = new Map<string, string>();
  let next = 0;
  for (const arg of template.args) {
    const value = named.get(arg.name) ?? positional[next++] ?? arg.default;
    if (value === undefined) {
      throw new TemplateError(
        `Missing argument "${arg.name}" for /${template.name}: it takes ${usage(template)}`,
      );
    }
    values.set(arg.name, value);
  }
  // `$ARGUMENTS` takes every word; otherwise a word no placeholder takes would be lost.
  const takes = Math.max(next, highestPosition(template.body));
  if (!template.body.includes("$ARGUMENTS") && positional.length > takes) {
    throw new TemplateError(
      `Too many arguments for /${template.name}: "${positional.slice(takes).join(" ")}" ` +
        `is left over; it takes ${taken(template)}, ${words.length} given`,
    );
  }
  let room = argText.length + MAX_TEMPLATE_REPEAT_CHARS;
  // Counted before the result is joined: a body that repeats an argument too often is refused
  // without building the message.
  const put = (value: string) => {
    room -= value.length;
    if (room < 0) {
      throw new TemplateError(
        `Cannot render /${template.name} ("${template.path}"): its placeholders repeat the ` +
          `arguments past ${MAX_TEMPLATE_REPEAT_CHARS.toLocaleString("en-US")} characters ` +
          "more than were given",
      );
    }
    return value;
  };
  return template.body.replace(PLACEHOLDER, (whole, digit?: string, name?: string) => {
    if (whole === "$ARGUMENTS") return put(argText.trim());
    if (digit !== undefined) {
      const word = positional[Number(digit) - 1];
      if (digit === "0" || word === undefined) {
        throw new TemplateError(
          `Missing argument $${digit} for /${template.name}: ${positional.length} given`,
        );
      }
      return put(word);
    }
    const value = values.get(name!);
    if (value === undefined) {
      throw new TemplateError(
        `Unknown argument "{{${name}}}" in /${template.name} ("${template.path}"): its ` +
          `frontmatter's args do not declare it`,
      );
    }
    return put(value);
  });
}

/** The highest `$N` in `body` (0 for none). */
function highestPosition(body: string): number {
  return Math.max(0, ...[...body.matchAll(/\$(\d)/g)].map((match) => Number(match[1])));
}

/** How many words `template` takes, and which: `2 (<file> $2)`, `none`. */
function taken(template: PromptTemplate): string {
  const count = Math.max(template.args.length, highestPosition(template.body));
  if (count === 0) return "none";
  const positions = Array.from(
    { length: count - template.args.length },
    (_, i) => `$${template.args.length + i + 1}`,
  );
  const shown = [...(template.args.length > 0 ? [usage(template)] : []), ...positions];
  return `${count} (${shown.join(" ")})`;
}

/**
 * How `template` is called: `/review <file> [focus=correctness]`, on one line without control
 * characters (a default is the repository's text, shown in `/help` and in error messages).
 */
export function usage(template: PromptTemplate): string {
  if (template.args.length === 0) return "no named arguments";
  return template.args.map((arg) =>
    arg.default === undefined
      ? `<${arg.name}>`
      : `[${arg.name}=${oneLine(arg.default).slice(0, 80)}]`
  ).join(" ");
}

/**
 * When `task` starts with `/name` (a name, then a blank or the end), the template of that name
 * rendered with the rest; undefined when it does not start so.
 * @throws {TemplateError} for an unknown template or a bad argument.
 */
export function expandTemplateCommand(
  task: string,
  templates: readonly PromptTemplate[],
): string | undefined {
  const match = /^\/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s+([\s\S]*))?$/.exec(task.trim());
  if (match === null) return undefined;
  const template = templates.find((candidate) => candidate.name === match[1]);
  if (template === undefined) {
    const names = templates.map((candidate) => `/${candidate.name}`).join(", ") || "none";
    throw new TemplateError(`Unknown prompt template "/${match[1]}" (templates: ${names})`);
  }
  return renderTemplate(template, match[2] ?? "");
}
