/**
 * Turns one validated server entry into an `McpServerConfig`: the transport (given or
 * inferred), `${VAR}` expansion, absolute paths, defaults and the fingerprint.
 */
import { dirname, resolve } from "../core/path.ts";
import { mayReadVariable, unreadableVariableHint } from "../config/env.ts";
import { formatValue } from "../config/errors.ts";
import { KNOWN_KEY_VARIABLES } from "../config/schema.ts";
import { checkEntry, type ConfigFormat, ENTRY_KEYS, type EntryInput } from "./_config_schema.ts";
import {
  expandVariables,
  fingerprintDefinition,
  formatKeyPath,
  type KeyPath,
} from "./_config_values.ts";
import { pinnedFiles, pinnedWorkspace, unpinnable } from "./_pinned_files.ts";
import { readCommandLine } from "./_pinned_command.ts";
import { packageRunnerPins } from "./_package_runner.ts";
import { loaderVariables } from "./_loader_env.ts";
import { isInside, projectFolderProblem } from "./project_paths.ts";
import {
  type McpSandboxSettings,
  type McpScope,
  type McpServerConfig,
  type McpTransportKind,
  SECRET_ENV_NAME,
  SECRET_HEADER_NAME,
} from "./types.ts";

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** A timeout from a file: the default when absent, and no longer than it from a project's. */
function within(value: number | undefined, fallback: number, scope: McpScope): number {
  if (value === undefined) return fallback;
  return scope === "project" ? Math.min(value, fallback) : value;
}

const STDIO_ONLY = ["command", "args", "env", "cwd", "sandbox"] as const;
const HTTP_ONLY = ["url", "headers"] as const;
/** Keys that only switch a server on or off: changing them needs no new trust. */
const NOT_FINGERPRINTED = new Set(["enabled", "disabled"]);

/** Where an entry comes from and how to report a problem in it. */
/** Variables tern reads for itself (settings and provider keys): never for project servers. */
const OWN_CREDENTIALS = new RegExp(
  `^(?:TERN_|OPENAI_|ANTHROPIC_|OPENROUTER_)|^(?:${KNOWN_KEY_VARIABLES.join("|")})$`,
);

export interface EntryContext {
  file: string;
  scope: McpScope;
  format: ConfigFormat;
  /** Absolute workspace path: the base of project `cwd` and of every `sandbox.writable`. */
  workspace: string;
  env: (name: string) => string | undefined;
  /** Variables the person's settings name as holding a key: refused as tern's own are. */
  keyVariables?: readonly string[];
  /**
   * Throws the ConfigError for `path` in this file; `text` is the message after
   * `Invalid MCP config "<file>": `.
   */
  raise: (path: KeyPath, text: string) => never;
}

/**
 * Builds the server defined as `value` at `path` (`["mcpServers", "github"]`).
 * @throws {ConfigError} (through `context.raise`) for a bad name, an invalid entry or an unset
 *   variable.
 */
export async function parseServerEntry(
  value: unknown,
  path: readonly [string, string],
  context: EntryContext,
): Promise<McpServerConfig> {
  const [container, name] = path;
  const fail = (at: KeyPath, detail: string): never =>
    context.raise(at, `"${formatKeyPath(at)}": ${detail}`);
  if (!SERVER_NAME.test(name)) {
    context.raise(
      path,
      `server name ${formatValue(name)} in "${container}" is not allowed — use 1 to 64 ` +
        `letters, digits, "_", "." or "-"`,
    );
  }
  const issue = checkEntry(value, context.format);
  if (issue) fail([...path, ...issue.path], issue.detail);
  const entry = value as EntryInput;
  const at = (...rest: (string | number)[]): KeyPath => [...path, ...rest];

  const transport = resolveTransport(entry, path, fail);
  const wrong = transport === "stdio" ? HTTP_ONLY : STDIO_ONLY;
  for (const key of wrong) {
    if (entry[key] === undefined || (key === "sandbox" && entry.sandbox === false)) continue;
    const kind = transport === "stdio" ? "stdio" : "Streamable HTTP";
    fail(at(key), `"${key}" does not apply to this ${kind} server — remove it`);
  }
  if (entry.enabled !== undefined && entry.disabled !== undefined) {
    if (entry.enabled === entry.disabled) fail(at("disabled"), 'contradicts "enabled" — keep one');
  }
  if (entry.timeout !== undefined && entry.requestTimeoutMs !== undefined) {
    fail(at("timeout"), 'both "timeout" and "requestTimeoutMs" are set — keep "requestTimeoutMs"');
  }

  // A checked-in project file must not be able to hand tern's own credentials to a server, nor
  // pass a secret-looking variable disguised (as `LOG_LEVEL`, an argument, a URL), where neither
  // the person reading the trust text nor the masking of secrets would take it for one: only as
  // the whole value of an `env` entry whose name looks secret too (`"TOKEN": "${GITHUB_TOKEN}"`)
  // or in a credential header.
  const envAt = (where: KeyPath, carries: (name: string) => boolean) => (name: string) => {
    if (context.scope === "user") return context.env(name);
    if (OWN_CREDENTIALS.test(name) || context.keyVariables?.includes(name)) {
      return context.raise(
        path,
        `"${formatKeyPath(path)}" uses \${${name}}, one of tern's own settings or keys: a ` +
          "project's MCP config may not pass it to a server — define the server in " +
          "~/.tern/mcp.json instead",
      );
    }
    if (SECRET_ENV_NAME.test(name) && !carries(name)) {
      return context.raise(
        where,
        `"${formatKeyPath(where)}" uses \${${name}}, whose name looks secret: a project's MCP ` +
          `config may pass it only as the whole value of an "env" entry whose name looks secret ` +
          `too ("${name}": "\${${name}}") or in a credential header — write it so, or define ` +
          "the server in ~/.tern/mcp.json",
      );
    }
    return context.env(name);
  };
  const never = () => false;
  const expand = (text: string, where: KeyPath, carries: (name: string) => boolean = never) => {
    const expanded = expandVariables(text, envAt(where, carries));
    if (expanded.ok) return expanded.value;
    const { problem } = expanded;
    if (problem.kind === "malformed") {
      return fail(
        where,
        `${formatValue(problem.reference)} is not a variable reference — write \${NAME} or ` +
          `\${NAME:-default}`,
      );
    }
    const { name } = problem;
    // Deno answers an unreadable variable as unset: say which it is, and the fix for each.
    const why = mayReadVariable(name)
      ? "which is not set: set it"
      : `which tern may not read: ${unreadableVariableHint(name)}`;
    return context.raise(
      where,
      `"${formatKeyPath(where)}" uses \${${name}}, ${why}, or give a default with ` +
        `\${${name}:-value}`,
    );
  };
  const env = Object.fromEntries(
    Object.entries(entry.env ?? {}).map(([name, text]) => [
      name,
      expand(text, at("env", name), (used) => SECRET_ENV_NAME.test(name) && text === `\${${used}}`),
    ]),
  );
  const headers = Object.fromEntries(
    Object.entries(entry.headers ?? {}).map(([name, text]) => [
      name,
      expand(text, at("headers", name), () => SECRET_HEADER_NAME.test(name)),
    ]),
  );

  const definition = Object.fromEntries(
    Object.entries(entry).filter(([key]) =>
      ENTRY_KEYS[context.format].includes(key) && !NOT_FINGERPRINTED.has(key)
    ),
  );
  const server: McpServerConfig = {
    name,
    file: context.file,
    key: formatKeyPath(path),
    scope: context.scope,
    transport,
    args: (entry.args ?? []).map((arg, index) => expand(arg, at("args", index))),
    env,
    headers,
    enabled: entry.enabled ?? !(entry.disabled ?? false),
    // A project's file may shorten the waits, never lengthen them: a server that stays silent
    // would hold every `tern run` for as long as its file says (up to 24 days).
    startupTimeoutMs: within(entry.startupTimeoutMs, DEFAULT_STARTUP_TIMEOUT_MS, context.scope),
    requestTimeoutMs: within(
      entry.requestTimeoutMs ?? entry.timeout,
      DEFAULT_REQUEST_TIMEOUT_MS,
      context.scope,
    ),
    fingerprint: await fingerprintDefinition(definition, context.scope),
  };
  if (context.scope === "project" && (entry.env !== undefined || entry.headers !== undefined)) {
    server.written = { env: { ...entry.env }, headers: { ...entry.headers } };
  }
  if (transport === "stdio") {
    server.command = expand(entry.command ?? "", at("command"));
    if (server.command === "") {
      fail(at("command"), "expands to an empty string — set the variable it uses");
    }
    // A project's server runs in bubblewrap whatever its file says: only the person's own
    // files may run a server without one (define it in ~/.tern/mcp.json to choose).
    const project = context.scope === "project";
    const sandbox = sandboxSettings(
      project && !entry.sandbox ? true : entry.sandbox,
      context.workspace,
    );
    if (sandbox) server.sandbox = sandbox;
    // A user file has no workspace of its own: its relative paths start at the file.
    const base = context.scope === "user" ? dirname(context.file) : context.workspace;
    server.cwd = entry.cwd === undefined
      ? defaultCwd(context, sandbox !== undefined)
      : resolve(base, expand(entry.cwd, at("cwd")));
    if (project) {
      // Checked again before each start (mcp_setup.ts): a folder may become a symlink later.
      const folders = [
        { path: server.cwd, use: "cwd" as const, key: at("cwd") },
        ...sandbox!.writable.map((path) => ({
          path,
          use: "writable" as const,
          key: at("sandbox", "writable"),
        })),
      ];
      for (const { path, use, key } of folders) {
        const problem = projectFolderProblem(path, context.workspace, { use, mustExist: false });
        if (problem !== undefined) fail(key, `${JSON.stringify(path)} ${problem}`);
      }
      // The words with the files the program reads (`package.json` for `npm`, Deno's config).
      const line = readCommandLine([server.command, ...server.args], {
        cwd: server.cwd,
        workspace: context.workspace,
      });
      server.files = {
        ...await pinnedFiles(line.argv, server.cwd, context.workspace),
        ...packageRunnerPins(line.argv, server.cwd, context.workspace),
      };
      // Code given as text (`bash -c '…'`), run from elsewhere (`env -C`) or a script that does
      // not exist as named (`node srv/server` runs srv/server.js) is named by no file trust
      // could pin: such a server can never be trusted.
      if (line.problem !== undefined) {
        server.files["the command line"] = unpinnable(
          `tern cannot tell which files it runs: ${line.problem}; put the server in a script ` +
            "file and name it as it is, with its extension",
        );
      }
      // `NODE_OPTIONS=--require ./x.js`, `PYTHONPATH`, `LD_PRELOAD`: the program would load a
      // file its command line does not name.
      const loaders = loaderVariables(Object.keys(entry.env ?? {}));
      if (loaders.length > 0) {
        server.files["the environment"] = unpinnable(
          `its "env" sets ${loaders.map((name) => `"${name}"`).join(", ")}, which can make ` +
            "the program load code its command line does not name; set options on the command " +
            "line instead (`node --enable-source-maps srv/server.js`), or define the server in " +
            "~/.tern/mcp.json",
        );
      }
      // With the network, any file of the workspace it loads would have the network too.
      if (sandbox?.network) Object.assign(server.files, await pinnedWorkspace(context.workspace));
    }
  } else {
    server.url = expand(entry.url ?? "", at("url"));
    if (!isHttpUrl(server.url)) {
      const written = entry.url ?? "";
      const detail = written === server.url
        ? `expected an http or https URL, got ${formatValue(written)}`
        : `${formatValue(written)} does not expand to an http or https URL`;
      fail(at("url"), detail);
    }
    for (const [header, text] of Object.entries(server.headers)) {
      if (/[\r\n\0]/.test(text)) {
        fail(
          at("headers", header),
          "holds a line break once expanded — a header value is one line",
        );
      }
    }
  }
  return server;
}

function resolveTransport(
  entry: EntryInput,
  path: KeyPath,
  fail: (at: KeyPath, detail: string) => never,
): McpTransportKind {
  const { type, command, url } = entry;
  if (type === "sse") {
    fail(
      [...path, "type"],
      "the legacy SSE transport is not supported — use the server's Streamable HTTP endpoint " +
        'with "type": "http"',
    );
  }
  if (type === "stdio" && command === undefined) {
    fail(path, 'a stdio server needs "command" — the program to start');
  }
  if ((type === "http" || type === "streamable-http") && url === undefined) {
    fail(path, 'a Streamable HTTP server needs "url" — its endpoint, such as http://host/mcp');
  }
  if (type === "stdio") return "stdio";
  if (type !== undefined) return "http";
  if (command !== undefined && url !== undefined) {
    fail(
      path,
      'both "command" and "url" are set — keep "command" for a stdio server or "url" for a ' +
        "Streamable HTTP server",
    );
  }
  if (command === undefined && url === undefined) {
    fail(
      path,
      'neither "command" nor "url" is set — give "command" (stdio) or "url" (Streamable HTTP)',
    );
  }
  return command !== undefined ? "stdio" : "http";
}

/**
 * Where a stdio server without `cwd` starts. In bubblewrap (every project server), the
 * workspace. The person's own server on the host, in the folder of the file that defines it
 * (their tern home), or at `/` when that folder lies in the workspace (tern run in the home
 * folder): launchers load code from where they start (`python -m` from that folder, `npx`,
 * `node` and `uv run` from it and the folders above), and what runs on the host must not be the
 * repository's choice.
 */
function defaultCwd(context: EntryContext, sandboxed: boolean): string {
  if (sandboxed) return context.workspace;
  const folder = dirname(context.file);
  return isInside(context.workspace, realPathOr(folder)) ? "/" : folder;
}

function realPathOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

function sandboxSettings(
  value: EntryInput["sandbox"],
  workspace: string,
): McpSandboxSettings | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { network: false, writable: [workspace] };
  return {
    network: value.network ?? false,
    writable: (value.writable ?? [workspace]).map((path) => resolve(workspace, path)),
  };
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "http:" || protocol === "https:";
}
