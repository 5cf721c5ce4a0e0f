/**
 * Lifecycle hooks as Claude Code writes them, read from three files: the person's
 * `<ternHome>/settings.json`, and the project's `.tern/settings.json` and
 * `.claude/settings.json` (read so that existing Claude Code setups work unchanged). Each has
 * `{"hooks": {"<Event>": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
 * "timeout": 60}]}]}}`. A project file's hooks run only once the person trusted that file's
 * hooks section (see `trust.ts`), pinned to its definition, the workspace scripts its
 * commands name and the files beside them.
 */
import { join } from "../../core/path.ts";
import { MAX_FOLDERS, PINNABLE_FORM, readHookCommand } from "../../mcp/_pinned_command.ts";
import { pinnedFiles, unpinnable } from "../../mcp/_pinned_files.ts";
import { readWorkspaceText, type Warn } from "../../config/workspace_file.ts";
import { warnPerson } from "../../core/warnings.ts";
import { ConfigError } from "../../config/errors.ts";

/** The events tern fires, with Claude Code's names. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Notification",
] as const;

export type HookEvent = typeof HOOK_EVENTS[number];

/** Seconds a hook may run when its entry gives no `timeout` (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

/**
 * The longest `timeout` a hook entry may give, in seconds (an hour): a larger one is cut to it,
 * and noted among the file's problems.
 */
export const MAX_HOOK_TIMEOUT_S = 3600;

/** One hook command. */
export interface HookCommand {
  event: HookEvent;
  /** The matcher as written ("" matches everything). */
  matcher: string;
  command: string;
  timeoutS: number;
  /**
   * Whose settings file defined it: only the person's own hooks (`"user"`) see their scripts'
   * folder, `<ternHome>/hooks` (see `scripts_folder.ts`); absent counts as the project's.
   */
  scope?: HookSource["scope"];
  /** The settings file that defined it (absolute), for messages. */
  file?: string;
  /**
   * A trusted project hook's pins as trust found them (see {@linkcode hookPins}): the hook runs
   * only while its files still hash the same.
   */
  pins?: Readonly<Record<string, string>>;
}

/** The hooks of one settings file. */
export interface HookSource {
  /** Absolute path of the settings file. */
  file: string;
  scope: "user" | "project";
  hooks: HookCommand[];
  /** SHA-256 of the file's hooks section, as JSON: what trust pins. */
  fingerprint: string;
  /**
   * The workspace files the commands name and the files beside them, with their content's hash
   * (project files only; {@linkcode pinHookFiles} fills it, each file's hash `NOT_HASHED`
   * while the file's hooks were never trusted).
   */
  files: Record<string, string>;
  /**
   * Problems of entries, each saying what became of it: left out (`"PreToolUse[0].hooks[1]":
   * expected …; left out`) or with its timeout cut.
   */
  problems: string[];
  /**
   * Why a project file was skipped (not valid JSON, unreadable, a symlink out of the workspace,
   * not a regular file): then it has no hooks, and nothing of it can be trusted.
   */
  unreadable?: string;
}

/**
 * Reads the hooks of the person's and the project's settings files; absent files and files
 * without a `hooks` section give nothing. A project file that cannot be read or is not JSON
 * (the repository's, or one a command wrote) gives a source with `unreadable` and no hooks, and
 * `warn` (default: stderr) is told; the person's own hooks still run.
 * @throws {ConfigError} `Cannot read hooks from "<file>": …` for the person's own file when it
 *   exists but cannot be read or is not JSON.
 */
export async function readHookSources(
  places: { ternHome: string; workspace: string },
  warn?: Warn,
): Promise<HookSource[]> {
  const files: Array<[string, HookSource["scope"]]> = [
    [join(places.ternHome, "settings.json"), "user"],
    [join(places.workspace, ".tern", "settings.json"), "project"],
    [join(places.workspace, ".claude", "settings.json"), "project"],
  ];
  const sources: HookSource[] = [];
  for (const [file, scope] of files) {
    const source = await readHookSource(file, scope, places.workspace, warn);
    if (source !== undefined) sources.push(source);
  }
  return sources;
}

async function readHookSource(
  file: string,
  scope: HookSource["scope"],
  workspace: string,
  warn: Warn | undefined,
): Promise<HookSource | undefined> {
  if (scope === "project") {
    const skipped = (why: string): HookSource => ({
      file,
      scope,
      hooks: [],
      fingerprint: "",
      files: {},
      problems: [],
      unreadable: why,
    });
    const prefix = `Skipping ${SETTINGS_WHAT} "${file}": `;
    let refused: string | undefined;
    let text: string | undefined;
    try {
      // A repository's file, or one a command wrote: read like every workspace file tern reads
      // (a regular file inside the workspace, at most 1 MiB), never a FIFO that would hold
      // every later start, a device, or a symlink to the person's files.
      text = readWorkspaceText(workspace, file, {
        what: SETTINGS_WHAT,
        warn: (said) => {
          refused = said.startsWith(prefix) ? said.slice(prefix.length) : said;
          (warn ?? warnPerson)(said);
        },
      });
    } catch (error) {
      const said = error instanceof Error ? error.message : String(error);
      const why = said.replace(`Cannot read ${SETTINGS_WHAT} "${file}": `, "");
      (warn ?? warnPerson)(`${prefix}${why}; your own hooks still run`);
      return skipped(why);
    }
    if (refused !== undefined) return skipped(refused);
    if (text === undefined) return undefined;
    const data = parseJson(text);
    if (typeof data === "string") {
      (warn ?? warnPerson)(`${prefix}${data}; your own hooks still run`);
      return skipped(data);
    }
    return await sourceOf(file, scope, data);
  }
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw new ConfigError(`Cannot read hooks from "${file}": ${(error as Error).message}`, {
      file,
      cause: error,
    });
  }
  const data = parseJson(text);
  if (typeof data === "string") {
    throw new ConfigError(`Cannot read hooks from "${file}": ${data}`, { file });
  }
  return await sourceOf(file, scope, data);
}

/** What `readWorkspaceText` calls a hook settings file in its messages. */
const SETTINGS_WHAT = "hook settings";

/** The parsed JSON of `text` (boxed), or why it is not JSON. */
function parseJson(text: string): { value: unknown } | string {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`;
  }
}

async function sourceOf(
  file: string,
  scope: HookSource["scope"],
  parsed: { value: unknown },
): Promise<HookSource | undefined> {
  const data = parsed.value;
  if (!isObject(data) || data.hooks === undefined) return undefined;
  const problems: string[] = [];
  const hooks = parseHooks(data.hooks, problems).map((hook) => ({ ...hook, scope, file }));
  return {
    file,
    scope,
    hooks,
    fingerprint: await sha256(JSON.stringify(data.hooks)),
    files: {},
    problems,
  };
}

/**
 * `source` with its pins (`files`): the workspace files its commands name, relative paths taken
 * from where a `cd DIR &&` (or `;`) before them leads, and the other files of each one's folder
 * (see `pinnedFiles`). Hashing reads files a repository names, so `load.ts` asks for it only
 * for a file whose hooks were trusted before, or are being trusted; with `hash` false each file
 * is only named (`NOT_HASHED`), to show what trust would pin. A user file pins nothing.
 */
export async function pinHookFiles(
  source: HookSource,
  workspace: string,
  options: { hash?: boolean } = {},
): Promise<HookSource> {
  if (source.scope !== "project") return source;
  const files: Record<string, string> = {};
  const hooks: HookCommand[] = [];
  for (const hook of source.hooks) {
    const pins = await hookPins(hook, workspace, options);
    Object.assign(files, pins);
    hooks.push({ ...hook, pins });
  }
  return { ...source, hooks, files };
}

/**
 * The files `hook`'s command pins (see {@linkcode pinHookFiles}), hashed unless `hash` is false:
 * what trust recorded for it, and what the runner checks again before each run.
 */
export async function hookPins(
  hook: Pick<HookCommand, "command">,
  workspace: string,
  options: { hash?: boolean } = {},
): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const { parts, tooManyFolders, unfollowable } = readHookCommand(hook.command, workspace);
  if (unfollowable !== undefined) {
    // The files it runs are not known, so what trust pinned could miss what runs.
    files[`the command "${hook.command.slice(0, 60)}"`] = unpinnable(
      `tern cannot tell which files it runs: ${unfollowable}; ${PINNABLE_FORM}`,
    );
  }
  if (tooManyFolders) {
    // Past the cap the folders a script may run from are not all known, so nothing pinned
    // would cover what runs: such a hook can never be trusted.
    files[`the folders of "${hook.command.slice(0, 60)}"`] = unpinnable(
      `its cd commands lead to more than ${MAX_FOLDERS} folders, the most followed`,
    );
  }
  for (const { cwd, argv, scripts, shallow } of parts) {
    Object.assign(
      files,
      await pinnedFiles(argv, cwd, workspace, {
        siblings: true,
        hash: options.hash,
        scripts,
        shallow,
      }),
    );
  }
  return files;
}

function parseHooks(section: unknown, problems: string[]): HookCommand[] {
  if (!isObject(section)) {
    problems.push(`"hooks": expected an object of events; left out`);
    return [];
  }
  const hooks: HookCommand[] = [];
  for (const [event, groups] of Object.entries(section)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(
        `"${event}": not an event tern knows (${HOOK_EVENTS.join(", ")}); left out`,
      );
      continue;
    }
    if (!Array.isArray(groups)) {
      problems.push(`"${event}": expected a list of {"matcher", "hooks"}; left out`);
      continue;
    }
    for (const [index, group] of groups.entries()) {
      const where = `${event}[${index}]`;
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        problems.push(`"${where}": expected {"matcher", "hooks": [...]}; left out`);
        continue;
      }
      const matcher = group.matcher ?? "";
      const problem = typeof matcher === "string"
        ? matcherProblem(matcher)
        : "not a valid regular expression";
      if (typeof matcher !== "string" || problem !== undefined) {
        problems.push(`"${where}.matcher": ${problem}; left out`);
        continue;
      }
      for (const [at, hook] of group.hooks.entries()) {
        const place = `${where}.hooks[${at}]`;
        if (!isObject(hook) || hook.type !== "command" || typeof hook.command !== "string") {
          problems.push(`"${place}": expected {"type": "command", "command": "…"}; left out`);
          continue;
        }
        const timeout = hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S;
        if (typeof timeout !== "number" || !(timeout > 0)) {
          problems.push(`"${place}.timeout": expected a positive number of seconds; left out`);
          continue;
        }
        // Cut rather than left out, so a guard still runs: JSON.parse makes 1e400 Infinity,
        // and a timer past 2^31 - 1 ms would fire at once.
        if (timeout > MAX_HOOK_TIMEOUT_S) {
          problems.push(
            `"${place}.timeout": ${timeout} s is more than ${MAX_HOOK_TIMEOUT_S} s; it waits ` +
              `${MAX_HOOK_TIMEOUT_S} s`,
          );
        }
        hooks.push({
          event: event as HookEvent,
          matcher,
          command: hook.command,
          timeoutS: Math.min(timeout, MAX_HOOK_TIMEOUT_S),
        });
      }
    }
  }
  return hooks;
}

/** Claude Code's tool names, and tern's for each. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Bash: "bash",
  Read: "read",
  Write: "write",
  Edit: "edit",
  MultiEdit: "multi_edit",
  Glob: "glob",
  Grep: "grep",
  WebFetch: "web_fetch",
  WebSearch: "web_search",
};

const TERN_TO_CLAUDE = new Map(Object.entries(CLAUDE_TOOL_NAMES).map(([c, t]) => [t, c]));

/** The longest matcher taken: tool names are short, and a matcher lists a few of them. */
const MAX_MATCHER_CHARS = 1_000;

/**
 * Why `matcher` cannot be used, or undefined. A matcher runs on tern's thread against every
 * tool's name, and an MCP server names its tools: a quantified group (`(a+)+`) or a
 * back-reference could make that match backtrack for ever on a name made for it. Claude Code's
 * matchers need neither (`Bash`, `Edit|Write`, `mcp__memory__.*`).
 */
function matcherProblem(matcher: string): string | undefined {
  if (matcher.length > MAX_MATCHER_CHARS) {
    return `longer than ${MAX_MATCHER_CHARS.toLocaleString("en-US")} characters`;
  }
  if (compileMatcher(matcher) === undefined) return "not a valid regular expression";
  if (
    /\)\s*(?:[*+?]|\{\d)/.test(matcher) || /\\(?:[1-9]|k<)/.test(matcher) ||
    mostQuantifiers(matcher) > MAX_QUANTIFIERS
  ) {
    return `a quantified group, a back-reference or more than ${MAX_QUANTIFIERS} quantifiers in ` +
      "one alternative, whose matching could backtrack for ever on a tool name made for it; " +
      "list the names (Edit|Write) or use .*";
  }
  return undefined;
}

/**
 * Quantifiers one alternative may hold: `a*a*a*…b` tries a name in time growing with its length
 * to the power of their count.
 */
const MAX_QUANTIFIERS = 3;

/** The most quantifiers (`*`, `+`, `?`, `{n,}`) in one top-level alternative of `matcher`. */
function mostQuantifiers(matcher: string): number {
  let depth = 0;
  let inClass = false;
  let count = 0;
  let most = 0;
  for (let i = 0; i < matcher.length; i++) {
    const c = matcher[i];
    if (c === "\\") {
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
    } else if (c === "(") {
      depth++;
    } else if (c === ")") {
      depth--;
    } else if (c === "|" && depth === 0) {
      most = Math.max(most, count);
      count = 0;
    } else if (c === "*" || c === "+" || (c === "{" && /^\{\d+,/.test(matcher.slice(i)))) {
      count++;
    } else if (c === "?" && !"(*+?}".includes(matcher[i - 1] ?? "(")) {
      // Not `(?:`, nor the `?` that makes a quantifier lazy.
      count++;
    }
  }
  return Math.max(most, count);
}

/** The matcher as a regular expression anchored at both ends; undefined when it is not valid. */
function compileMatcher(matcher: string): RegExp | undefined {
  if (matcher === "" || matcher === "*") return /^/;
  try {
    return new RegExp(`^(?:${matcher})$`);
  } catch {
    return undefined;
  }
}

/**
 * Whether `matcher` selects the tool `toolName` (tern's name): Claude Code's rule — a regular
 * expression on the whole name, `*` or "" for every tool — tried on tern's name and on Claude
 * Code's name for the same tool (`Bash` for `bash`), so a matcher written for Claude Code works.
 * Events without a tool match every matcher.
 */
export function matches(matcher: string, toolName: string | undefined): boolean {
  if (toolName === undefined) return true;
  const pattern = compileMatcher(matcher);
  if (pattern === undefined) return false;
  const claude = TERN_TO_CLAUDE.get(toolName);
  return pattern.test(toolName) || (claude !== undefined && pattern.test(claude));
}

/** Claude Code's name of the tern tool `name` (`Bash` for `bash`), or `name` itself. */
export function claudeToolName(name: string): string {
  return TERN_TO_CLAUDE.get(name) ?? name;
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
