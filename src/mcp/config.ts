/**
 * Finds and reads the MCP server definitions: the person's own files under tern's home and the
 * project's files in the workspace, later files replacing earlier definitions of a name.
 * jsonc-parser and zod are imported only when at least one file exists.
 */
import type { Node, ParseError } from "jsonc-parser";
import { join, resolve } from "../core/path.ts";
import {
  ConfigError,
  describeReadError,
  formatValue,
  jsoncSyntaxMessage,
  lineColumnAt,
} from "../config/errors.ts";
import { readWorkspaceText, type Warn } from "../config/workspace_file.ts";
import { deeperThanAt, MAX_JSONC_DEPTH } from "../config/jsonc_depth.ts";
import type { ConfigFormat } from "./_config_schema.ts";
import { formatKeyPath, type KeyPath } from "./_config_values.ts";
import { namesOverlap, toolPrefix } from "./tool_names.ts";
import type { McpScope, McpServerConfig } from "./types.ts";

/** Where to look for MCP config files and how to read variables. */
export interface LoadMcpConfigOptions {
  /** tern's home (~/.tern, or TERN_HOME): holds user mcp.json and mcp/*.json. */
  ternHome: string;
  /** Absolute real path of the workspace: holds project .mcp.json, .tern/mcp.json, .tern/mcp/*.json. */
  workspace: string;
  /** Reads an environment variable for ${VAR} expansion; undefined when unset or not readable. */
  env: (name: string) => string | undefined;
  /**
   * Variables the person's settings name as holding a key (`TernConfig.keyVariables`): a
   * project's file may not pass them to a server, as it may not pass tern's own.
   */
  keyVariables?: readonly string[];
  /**
   * Given: a problem is told here and disables only what it touches: a bad server entry or an
   * unset `${VAR}`, that server (in any file); a project file or folder that cannot be read or
   * parsed (a folder named `.mcp.json`, nesting past 64 levels, anything), its servers. A
   * skipped project file (a symlink out of the workspace, a hard link) is told here too.
   * Absent: such problems throw, and skipped files warn on stderr. A file of the person's own
   * that cannot be parsed always throws: which names it defines, and so keeps from a project's
   * servers, is unknown.
   */
  warn?: Warn;
}

/** Every configured server and where the definitions came from. */
export interface McpConfigResult {
  /** Every server defined, enabled or not, sorted by name. */
  servers: McpServerConfig[];
  /** The files that were read, in the order they were applied. */
  files: string[];
}

interface ConfigSource {
  file: string;
  scope: McpScope;
  format: ConfigFormat;
  text: string;
}

/**
 * Reads, in this order: `<ternHome>/mcp.json`, `<ternHome>/mcp/*.json` (by file name), then the
 * workspace's `.mcp.json` (`{"mcpServers": …}` as other agents write it), `.tern/mcp.json` and
 * `.tern/mcp/*.json`. A later definition of a name replaces the earlier one whole, except that
 * a project file never replaces the person's own definition of a name. Missing files and
 * folders are skipped; files are JSONC (comments and trailing commas allowed). Project files
 * are read as workspace_file.ts reads them (a symlink out of the workspace or a hard link is
 * skipped). When the workspace's `.tern` is tern's home itself, its files count once, as the
 * user's.
 * @throws {ConfigError} naming the file and the key (and line/column for syntax errors); for a
 *   project file only when `options.warn` is absent, and then for any problem with it.
 */
export async function loadMcpConfig(options: LoadMcpConfigOptions): Promise<McpConfigResult> {
  const sources = await readSources(options);
  if (sources.length === 0) return { servers: [], files: [] };
  const [jsonc, { parseServerEntry }] = await Promise.all([
    import("jsonc-parser"),
    import("./_config_entry.ts"),
  ]);
  const servers = new Map<string, McpServerConfig>();
  // The person's own names, those that failed too: a project's server never takes one.
  const ownNames = new Map<string, string>();
  // A problem costs only what it touches, when someone can be told.
  const isolate = async <T>(source: ConfigSource, what: string, fn: () => Promise<T> | T) => {
    try {
      return await fn();
    } catch (error) {
      const problem = source.scope === "project" ? projectProblem(source.file, error) : error;
      if (options.warn === undefined || !(problem instanceof ConfigError)) throw problem;
      options.warn(`${problem.message} — ${what} not used`);
      return undefined;
    }
  };
  for (const source of sources) {
    const parsed = source.scope === "user"
      ? parseSource(jsonc, source)
      : await isolate(source, "its servers are", () => parseSource(jsonc, source));
    if (parsed === undefined) continue;
    for (const { path, value } of parsed.entries) {
      if (source.scope === "user") ownNames.set(path[1], source.file);
      const server = await isolate(
        source,
        `server "${path[1]}" is`,
        () =>
          parseServerEntry(value, path, {
            file: source.file,
            scope: source.scope,
            format: source.format,
            workspace: options.workspace,
            env: options.env,
            keyVariables: options.keyVariables,
            raise: parsed.raise,
          }),
      );
      if (server === undefined) {
        // A user's entry that failed leaves no definition behind it to fall back on.
        if (source.scope === "user") servers.delete(path[1]);
        continue;
      }
      const ownFile = ownNames.get(server.name);
      if (ownFile !== undefined && server.scope === "project") {
        options.warn?.(
          `MCP server "${server.name}" in "${server.file}" is not used: your own definition ` +
            `in "${ownFile}" has that name`,
        );
        continue;
      }
      // Nor take the tool names, and so the rules, of one of the person's servers.
      const shadowed = server.scope === "project"
        ? [...ownNames].find(([name]) => namesOverlap(name, server.name))
        : undefined;
      if (shadowed !== undefined) {
        const [name, file] = shadowed;
        options.warn?.(
          `MCP server "${server.name}" in "${server.file}" is not used: its tools would be named ` +
            `like those of your own server "${name}" (${toolPrefix(name)}*) ` +
            `in "${file}" — rename it in the project's file`,
        );
        continue;
      }
      servers.set(server.name, server);
    }
  }
  // Two project servers named into each other's tool names (`x` and `x__y`) are both left out: a
  // rule the person wrote for the one they trusted would answer for the other's tools too.
  const project = [...servers.values()].filter((server) => server.scope === "project");
  for (const server of project) {
    const other = project.find((o) => o !== server && namesOverlap(o.name, server.name));
    if (other === undefined) continue;
    servers.delete(server.name);
    options.warn?.(
      `MCP server "${server.name}" in "${server.file}" is not used: its tools would be named ` +
        `like those of the project's server "${other.name}" (${toolPrefix(other.name)}*) ` +
        `in "${other.file}" — rename one of them in the project's files`,
    );
  }
  const sorted = [...servers.values()].sort((a, b) => a.name < b.name ? -1 : 1);
  return { servers: sorted, files: sources.map((source) => source.file) };
}

async function readSources(options: LoadMcpConfigOptions): Promise<ConfigSource[]> {
  const { ternHome, workspace } = options;
  const candidates: Omit<ConfigSource, "text">[] = [];
  const addFolder = async (folder: string, scope: McpScope) => {
    const files = scope === "user"
      ? await listJsonFiles(folder)
      : await readProjectFile(folder, options, () => listJsonFiles(folder));
    for (const file of files ?? []) candidates.push({ file, scope, format: "tern" });
  };
  candidates.push({ file: join(ternHome, "mcp.json"), scope: "user", format: "tern" });
  await addFolder(join(ternHome, "mcp"), "user");
  candidates.push({ file: join(workspace, ".mcp.json"), scope: "project", format: "mcp.json" });
  // Run in the home folder, the project's `.tern` is tern's home: its files are the person's own.
  if (resolve(workspace, ".tern") !== resolve(ternHome)) {
    candidates.push({
      file: join(workspace, ".tern", "mcp.json"),
      scope: "project",
      format: "tern",
    });
    await addFolder(join(workspace, ".tern", "mcp"), "project");
  }
  const sources: ConfigSource[] = [];
  for (const candidate of candidates) {
    const text = candidate.scope === "user"
      ? await readOptionalText(candidate.file)
      : await readProjectFile(candidate.file, options, () =>
        readWorkspaceText(workspace, candidate.file, { what: "MCP config", warn: options.warn }));
    if (text !== undefined) sources.push({ ...candidate, text });
  }
  return sources;
}

/**
 * `read()`, where a project's file or folder that cannot be read (a folder named `.mcp.json`,
 * no permission, anything) costs only its own servers: `options.warn` is told, naming it, and
 * undefined is returned. Without `warn`, the problem throws as a ConfigError naming the file.
 */
async function readProjectFile<T>(
  file: string,
  options: LoadMcpConfigOptions,
  read: () => Promise<T> | T,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    const problem = projectProblem(file, error);
    if (options.warn === undefined) throw problem;
    options.warn(`${problem.message} — its servers are not used`);
    return undefined;
  }
}

/**
 * `error`, met while reading a project's file, as a ConfigError naming `file`: a repository may
 * write anything there, and what goes wrong with one file must stay that file's problem.
 */
function projectProblem(file: string, error: unknown): ConfigError {
  if (error instanceof ConfigError) return error;
  return new ConfigError(`Cannot use MCP config "${file}": ${describeReadError(error)}`, {
    file,
    cause: error,
  });
}

/** The `*.json` files in `folder` sorted by name; none when it does not exist. Dot files are skipped. */
async function listJsonFiles(folder: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isDirectory || entry.name.startsWith(".") || !entry.name.endsWith(".json")) {
        continue;
      }
      names.push(entry.name);
    }
  } catch (error) {
    if (isMissing(error)) return [];
    throw new ConfigError(
      `Cannot read MCP config folder "${folder}": ${describeReadError(error)}`,
      { file: folder, cause: error },
    );
  }
  return names.sort().map((name) => join(folder, name));
}

async function readOptionalText(file: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw new ConfigError(`Cannot read MCP config "${file}": ${describeReadError(error)}`, {
      file,
      cause: error,
    });
  }
}

function isMissing(error: unknown): boolean {
  return error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
}

type Jsonc = typeof import("jsonc-parser");

type Raise = (path: KeyPath, text: string) => never;

/**
 * Parses one file into its server entries, in file order, and a `raise` that reports a key of
 * it with its line and column. Undefined for a file of only whitespace and comments.
 */
function parseSource(
  jsonc: Jsonc,
  source: ConfigSource,
): { entries: { path: [string, string]; value: unknown }[]; raise: Raise } | undefined {
  const { file, format } = source;
  // A byte order mark is invisible to the reader, so offsets (and columns) start after it.
  const text = source.text.charCodeAt(0) === 0xfeff ? source.text.slice(1) : source.text;
  // The parser recurses once per level: a file nested thousands deep would overflow the stack.
  const tooDeep = deeperThanAt(jsonc, text);
  if (tooDeep !== undefined) {
    const position = lineColumnAt(text, tooDeep);
    throw new ConfigError(
      `Invalid MCP config "${file}": line ${position.line}, column ${position.column}: nested ` +
        `more than ${MAX_JSONC_DEPTH} levels deep — an MCP config needs no more than a few`,
      { file, ...position },
    );
  }
  const errors: ParseError[] = [];
  const root = jsonc.parseTree(text, errors, { allowTrailingComma: true });
  if (root === undefined && jsonc.stripComments(text).trim() === "") return undefined;
  if (errors.length > 0 || root === undefined) {
    const offset = errors[0]?.offset ?? 0;
    const name = errors[0] ? jsonc.printParseErrorCode(errors[0].error) : "ValueExpected";
    const position = lineColumnAt(text, offset);
    throw new ConfigError(
      `Invalid MCP config "${file}": line ${position.line}, column ${position.column}: ` +
        jsoncSyntaxMessage(name),
      { file, key: formatKeyPath(jsonc.getLocation(text, offset).path), ...position },
    );
  }
  const raise: Raise = (path, message) => {
    const node = jsonc.findNodeAtLocation(root, [...path]);
    // Point at the key rather than its value, and at the top of the file for the whole file.
    const keyNode = node?.parent?.type === "property" ? node.parent.children?.[0] : node;
    const position = lineColumnAt(text, keyNode?.offset ?? root.offset);
    throw new ConfigError(`Invalid MCP config "${file}": ${message}`, {
      file,
      key: formatKeyPath(path),
      ...position,
    });
  };
  const fail = (path: KeyPath, detail: string): never =>
    raise(path, `"${formatKeyPath(path)}": ${detail}`);
  if (root.type !== "object") {
    raise([], `expected an object at the top level, got ${formatValue(jsonc.getNodeValue(root))}`);
  }

  const present = new Map(
    (root.children ?? []).map((property) => [String(property.children?.[0]?.value), property]),
  );
  if (format === "tern") {
    for (const key of present.keys()) {
      if (key !== "servers" && key !== "mcpServers") {
        fail([key], 'unknown key — known keys: "servers", "mcpServers"');
      }
    }
    if (present.has("servers") && present.has("mcpServers")) {
      fail(["mcpServers"], 'both "servers" and "mcpServers" are set — keep one');
    }
  }
  const container = format === "tern" && present.has("servers") ? "servers" : "mcpServers";
  const serversNode = present.get(container)?.children?.[1];
  if (serversNode === undefined) return { entries: [], raise };
  if (serversNode.type !== "object") {
    const got = formatValue(jsonc.getNodeValue(serversNode));
    fail([container], `expected an object of servers by name, got ${got}`);
  }
  return { entries: entriesOf(jsonc, serversNode, container, fail), raise };
}

function entriesOf(
  jsonc: Jsonc,
  serversNode: Node,
  container: string,
  fail: (path: KeyPath, detail: string) => never,
): { path: [string, string]; value: unknown }[] {
  const seen = new Set<string>();
  const entries: { path: [string, string]; value: unknown }[] = [];
  for (const property of serversNode.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (keyNode === undefined || valueNode === undefined) continue;
    const name = String(keyNode.value);
    if (seen.has(name)) fail([container, name], "is defined twice in this file — keep one");
    seen.add(name);
    entries.push({ path: [container, name], value: jsonc.getNodeValue(valueNode) });
  }
  return entries;
}
