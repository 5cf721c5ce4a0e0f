/** The MCP client's shared vocabulary: one configured server, as every part of src/mcp sees it. */

/** How tern talks to a server. */
export type McpTransportKind = "stdio" | "http";

/** Where a server was defined; user files are trusted, project files need `tern mcp trust`. */
export type McpScope = "user" | "project";

/**
 * The name in `McpServerConfig.files` of the pin over every file of the workspace, which a
 * project server with the network gets (see `_pinned_files.ts`).
 */
export const WORKSPACE_PIN = "every file of the workspace";

/**
 * Variable names that look secret: their values are masked, and a project may not move them.
 * The names the sandbox keeps from commands (sandbox/shell_env.ts): a variable it takes for a
 * secret (`DB_PASS`, `SENTRY_DSN`, `GH_PAT`) must not reach a project's server as a plain word.
 */
export const SECRET_ENV_NAME =
  /KEY|TOKEN|SECRET|PASS|CREDENTIAL|CREDS|AUTH|COOKIE|SESSION|PRIVATE|PAT$|DSN|SALT/i;

/** Header names that carry credentials (`Authorization`, `X-Api-Key`, cookies, sessions). */
export const SECRET_HEADER_NAME = /authorization|token|key|secret|cookie|auth|session|passw/i;

/** The optional bubblewrap sandbox around a stdio server. */
export interface McpSandboxSettings {
  /** Share the host network (default false: a network namespace of its own). */
  network: boolean;
  /** Absolute paths bound read-write (default: the workspace); everything else is read-only. */
  writable: string[];
}

/** One server from the config files, validated, with `${VAR}` references expanded. */
export interface McpServerConfig {
  /** The key it was defined under (`mcpServers.<name>` or `servers.<name>`). */
  name: string;
  /** The file that defined it (the last one, when several define the same name). */
  file: string;
  /** The key path in that file, for messages: `mcpServers.github`. */
  key: string;
  scope: McpScope;
  transport: McpTransportKind;
  /** stdio: the program and its arguments. */
  command?: string;
  args: string[];
  /** stdio: variables added to the server's minimal environment (PATH, HOME, …). */
  env: Record<string, string>;
  /**
   * stdio: working directory, absolute. Default: the workspace for a server in bubblewrap; for
   * the person's own server outside it, the folder of the file that defines it (or `/` when
   * that folder is in the workspace), never a folder the repository controls.
   */
  cwd?: string;
  /** http: the Streamable HTTP endpoint. */
  url?: string;
  /** http: headers sent with every request (for example `Authorization`). */
  headers: Record<string, string>;
  /**
   * Project servers: `env` and `headers` as written, `${VAR}` references unexpanded, so the
   * person sees before trusting which variable each value carries.
   */
  written?: { env: Record<string, string>; headers: Record<string, string> };
  /** False: listed, never started. */
  enabled: boolean;
  /** `initialize` must complete within this many milliseconds (default 30,000). */
  startupTimeoutMs: number;
  /** Each request (a tool call) must complete within this many milliseconds (default 120,000). */
  requestTimeoutMs: number;
  /** stdio only: run the server inside bubblewrap. */
  sandbox?: McpSandboxSettings;
  /**
   * SHA-256 (hex) of the definition as written, before `${VAR}` expansion: what
   * `tern mcp trust` records, so a changed project definition needs trusting again.
   */
  fingerprint: string;
  /**
   * Project stdio servers: the workspace files the command line names (relative path → SHA-256
   * of the content, or "missing"), pinned by `tern mcp trust` with the fingerprint: a changed
   * script needs trusting again. With the network, also {@linkcode WORKSPACE_PIN}.
   */
  files?: Record<string, string>;
}

/**
 * How tern names a server in what it says of it: `MCP server "github"`, and an HTTP server with
 * where it is, by its origin only (`MCP server "api" at https://mcp.example.com`): the URL's
 * user, password, path and query may carry credentials.
 */
export function serverLabel(config: Pick<McpServerConfig, "name" | "transport" | "url">): string {
  const label = `MCP server "${config.name}"`;
  if (config.transport !== "http" || config.url === undefined || !URL.canParse(config.url)) {
    return label;
  }
  return `${label} at ${new URL(config.url).origin}`;
}

/**
 * The secret values `config` hands its server: `env` entries whose names look secret
 * (`*_TOKEN`, `*_KEY`, …), credential headers (the token of `Bearer …` too), and its URL's
 * password and the values of query parameters whose names look secret (`?api_key=…`), as
 * written and decoded. Output or errors that echo them are masked with them.
 */
export function serverSecrets(config: McpServerConfig): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(config.env)) {
    if (SECRET_ENV_NAME.test(name)) values.push(value);
  }
  for (const [name, value] of Object.entries(config.headers)) {
    if (!SECRET_HEADER_NAME.test(name)) continue;
    values.push(value);
    const scheme = /^(?:Bearer|Basic|Token)\s+(\S+)$/i.exec(value.trim());
    if (scheme) values.push(scheme[1]);
  }
  if (config.url !== undefined && URL.canParse(config.url)) {
    const url = new URL(config.url);
    values.push(url.password, decoded(url.password));
    for (const part of url.search.slice(1).split("&")) {
      const at = part.indexOf("=");
      const value = at < 0 ? "" : part.slice(at + 1);
      if (SECRET_ENV_NAME.test(decoded(part.slice(0, Math.max(at, 0))))) {
        values.push(value, decoded(value));
      }
    }
  }
  return [...new Set(values)].filter((value) => value !== "");
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}
