/**
 * All configured MCP servers of one workspace: started in parallel in the background, their
 * tools exposed as `mcp__{server}__{tool}`, closed together. Disabled servers and project
 * servers nobody trusted yet are listed but never started.
 */
import { hostSearchPath } from "../core/host_programs.ts";
import {
  McpConnection,
  type McpState,
  type McpToolInfo,
  type TransportHandle,
} from "./connection.ts";
import {
  MAX_SCHEMA_BYTES,
  type McpTool,
  mcpTool,
  readOnlyHintCounts,
  schemaProblem,
} from "./mcp_tool.ts";
import { exposedToolNames, toolKey } from "./tool_names.ts";
import { unpinnableReasons } from "./_pinned_files.ts";
import {
  type McpScope,
  type McpServerConfig,
  type McpTransportKind,
  serverLabel,
  serverSecrets,
} from "./types.ts";

/** A server's state as listed: its lifecycle, or why it is not started. */
export type McpServerState = McpState | "DISABLED" | "UNTRUSTED";

/** One server, as `tern mcp list` and `/mcp` show it. */
export interface McpServerStatus {
  name: string;
  /** How to name it in a message: `MCP server "x"`, an HTTP one with its origin (`serverLabel`). */
  label: string;
  state: McpServerState;
  transport: McpTransportKind;
  scope: McpScope;
  file: string;
  /** Tools of a READY server offered to the model. */
  tools: number;
  error?: string;
  /** What the server calls itself, once READY. */
  server?: { name: string; version: string };
  /**
   * False for a project server tern can never trust (a file its command line names cannot be
   * pinned: `unpinnableReasons`); its `error` says why, and no trust command would start it.
   */
  trustable?: boolean;
}

/** Runs a stdio server's command some other way (inside bubblewrap). */
export type SandboxCommand = (
  config: McpServerConfig,
  argv: string[],
) => Promise<{ argv: string[]; cleanup?: () => Promise<void> }>;

export interface McpManagerOptions {
  servers: readonly McpServerConfig[];
  /** True when a server may start (user servers; project servers after `tern mcp trust`). */
  trusted: (server: McpServerConfig) => boolean;
  /** Why a project server trusted before needs trust again (a file it runs changed). */
  whyUntrusted?: (server: McpServerConfig) => string | undefined;
  /** Working directory of stdio servers without a `cwd`. */
  workspace: string;
  clientVersion: string;
  /** The environment every stdio server starts with (no keys); its own `env` is added. */
  baseEnv: Readonly<Record<string, string>>;
  /** Wraps the command of a server with `sandbox` set; such a server fails without it. */
  sandboxCommand?: SandboxCommand;
  /** Told once about each tool that is not offered (its schema is too large). */
  warn?: (text: string) => void;
}

type Listener = () => void;

export class McpManager {
  #options: McpManagerOptions;
  #connections = new Map<string, McpConnection>();
  #listeners = new Set<Listener>();
  #tools: McpTool[] | undefined;
  /** The tool made for each listed tool, by the server's own tool object. */
  #made = new Map<McpToolInfo, McpTool>();
  /** Whether each listed tool may be offered (see `schemaProblem`), by its tool object. */
  #offered = new WeakMap<McpToolInfo, boolean>();
  /** The warnings told, so a list read again tells nothing twice. */
  #told = new Set<string>();
  #closing: Promise<void> | undefined;

  constructor(options: McpManagerOptions) {
    this.#options = options;
    for (const config of options.servers) {
      if (config.enabled && options.trusted(config)) {
        this.#connections.set(config.name, this.#connection(config));
      }
    }
  }

  /** Servers that will start (enabled and trusted). */
  get startable(): number {
    return this.#connections.size;
  }

  /** Starts every enabled, trusted server in parallel; returns at once. */
  start(): void {
    for (const connection of this.#connections.values()) void connection.start();
  }

  /**
   * Starts one server (also one that was not trusted when the manager was made: the person
   * just trusted it) and resolves with its status once it is READY or FAILED.
   * @throws {RangeError} for an unknown or disabled server.
   */
  async startServer(name: string): Promise<McpServerStatus> {
    if (this.#closing) throw new RangeError(`Cannot start MCP server "${name}": closed`);
    const config = this.#options.servers.find((server) => server.name === name);
    if (config !== undefined && config.enabled && !this.#connections.has(name)) {
      this.#connections.set(name, this.#connection(config));
    }
    await this.#get(name).start();
    return this.status().find((status) => status.name === name)!;
  }

  /** Resolves once no server is starting any more (each is READY or FAILED). */
  async settled(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((c) => c.start()));
  }

  /** Every configured server, sorted by name. */
  status(): McpServerStatus[] {
    return this.#options.servers.map((config) => {
      const connection = this.#connections.get(config.name);
      const base = {
        name: config.name,
        label: serverLabel(config),
        transport: config.transport,
        scope: config.scope,
        file: config.file,
      };
      if (!config.enabled) return { ...base, state: "DISABLED", tools: 0 };
      if (connection === undefined) {
        const why = this.#options.whyUntrusted?.(config);
        // Trusting would not help a server that can never be trusted: say what can. One that
        // was trusted hears first what changed since (a script removed).
        const never = unpinnableReasons(config.files ?? {});
        if (never.length > 0) {
          // Once trusted, it is said so (`watchMcp` tells it), without a command that is refused.
          return {
            ...base,
            state: "UNTRUSTED",
            tools: 0,
            trustable: false,
            error: why === undefined
              ? `tern cannot trust this project server: ${never.join(", ")}`
              : `needs trust again: ${why}; tern cannot trust it as it is now`,
          };
        }
        return {
          ...base,
          state: "UNTRUSTED",
          tools: 0,
          error: why !== undefined
            ? `needs trust again: ${why}; check it, then \`tern mcp trust ${config.name}\``
            : `a project server: start it with \`tern mcp trust ${config.name}\``,
        };
      }
      const status: McpServerStatus = {
        ...base,
        state: connection.state,
        tools: this.tools().filter((tool) => tool.server === config.name).length,
      };
      if (connection.error !== undefined) status.error = connection.error;
      const info = connection.serverInfo;
      if (info !== undefined && connection.state === "READY") {
        status.server = { name: info.name, version: info.version };
      }
      return status;
    });
  }

  /** The tools of one server as it lists them. @throws {RangeError} for an unknown server. */
  toolsOf(server: string): readonly McpToolInfo[] {
    return this.#get(server).tools;
  }

  /**
   * The tools of every READY server, with their model-facing names, in name order: all they
   * list but those whose schema is over `MAX_SCHEMA_BYTES` (told to `warn` once each).
   */
  tools(): McpTool[] {
    if (this.#tools) return this.#tools;
    const ready = [...this.#connections.values()].filter((c) => c.state === "READY")
      .map((c) => ({ c, listed: c.tools.filter((info) => this.#offer(c.name, info)) }));
    const names = exposedToolNames(
      ready.flatMap(({ c, listed }) => listed.map((tool) => ({ server: c.name, tool: tool.name }))),
    );
    // The same listed tool under the same name stays the same object (its validator compiled
    // once, the conversation's registry untouched); a changed list makes new ones.
    const made = new Map<McpToolInfo, McpTool>();
    this.#tools = ready.flatMap(({ c, listed }) =>
      listed.map((info) => {
        const name = names.get(toolKey(c.name, info.name))!;
        const known = this.#made.get(info);
        const tool = known?.name === name
          ? known
          : mcpTool(c, info, name, readOnlyHintCounts(c.config));
        made.set(info, tool);
        return tool;
      })
    ).sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    this.#made = made;
    return this.#tools;
  }

  /** The tool the model knows as `name`, if a READY server has it. */
  tool(name: string): McpTool | undefined {
    return this.tools().find((tool) => tool.name === name);
  }

  /**
   * Calls `tool` of `server` directly (`tern mcp call`), validating `args` first. Outside a
   * session's masker, what it answers has the secrets its config hands it masked at least.
   */
  async call(server: string, tool: string, args: unknown, signal: AbortSignal) {
    const connection = this.#get(server);
    await connection.start();
    const found = this.tools().find((t) => t.server === server && t.tool === tool);
    if (found === undefined) {
      const known = connection.tools.map((t) => `"${t.name}"`).join(", ") || "none";
      const listed = connection.tools.find((t) => t.name === tool);
      const why = connection.state !== "READY"
        ? `it is ${connection.state}${connection.error ? `: ${connection.error}` : ""}`
        : listed === undefined
        ? `it has no tool "${tool}" (its tools: ${known})`
        : `its input schema takes more than ${MAX_SCHEMA_BYTES / 1024} KB of JSON, the most ` +
          "offered to the model";
      throw new RangeError(`Cannot call "${tool}" on ${connection.label}: ${why}`);
    }
    const observation = await found.run(args, { signal });
    return observation.status === "SUCCEEDED"
      ? { ...observation, output: connection.masked(observation.output) }
      : { ...observation, message: connection.masked(observation.message) };
  }

  /**
   * Secret values the configs hand to servers (see {@linkcode serverSecrets}), so tool output
   * echoing them can be masked like API keys.
   */
  secrets(): string[] {
    return this.#options.servers.flatMap(serverSecrets);
  }

  /** Told whenever a server's state or tools change. Returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Kills every stdio server's process group now (the process is exiting); see `close()`. */
  kill(): void {
    for (const connection of this.#connections.values()) connection.kill();
  }

  /** Closes every server (stdio process groups end); idempotent. */
  close(): Promise<void> {
    this.#closing ??= Promise.all([...this.#connections.values()].map((c) => c.close()))
      .then(() => {});
    return this.#closing;
  }

  /** True when `info` may be offered to the model; a warning, once, when not. */
  #offer(server: string, info: McpToolInfo): boolean {
    let offered = this.#offered.get(info);
    if (offered === undefined) {
      const problem = schemaProblem(server, info);
      offered = problem === undefined;
      this.#offered.set(info, offered);
      if (problem !== undefined && !this.#told.has(problem)) {
        this.#told.add(problem);
        this.#options.warn?.(problem);
      }
    }
    return offered;
  }

  #get(server: string): McpConnection {
    const connection = this.#connections.get(server);
    if (connection) return connection;
    const config = this.#options.servers.find((s) => s.name === server);
    if (config && !config.enabled) {
      throw new RangeError(`MCP server "${server}" is disabled in "${config.file}"`);
    }
    if (config) {
      const never = unpinnableReasons(config.files ?? {});
      throw new RangeError(
        never.length > 0
          ? `MCP server "${server}" (from "${config.file}") cannot start: tern cannot trust ` +
            `this project server: ${never.join(", ")}`
          : `MCP server "${server}" (from "${config.file}") is not trusted: run \`tern mcp trust ${server}\``,
      );
    }
    const known = this.#options.servers.map((s) => `"${s.name}"`).join(", ") || "none";
    throw new RangeError(`Unknown MCP server "${server}" (configured: ${known})`);
  }

  #connection(config: McpServerConfig): McpConnection {
    return new McpConnection({
      config,
      clientVersion: this.#options.clientVersion,
      // Whatever the transport, a server cannot make tern queue unbounded answers to it.
      connect: async (c) => {
        const handle = await this.#transport(c);
        const { limitedTransport } = await import("./transport_limits.ts");
        return {
          ...handle,
          transport: limitedTransport(handle.transport, serverLabel(c)),
        };
      },
      onChange: () => {
        this.#tools = undefined;
        for (const listener of this.#listeners) listener();
      },
    });
  }

  async #transport(config: McpServerConfig): Promise<TransportHandle> {
    if (config.transport === "http") {
      const { cappedFetch, StreamableHTTPClientTransport } = await import("./http_transport.ts");
      const capped = cappedFetch(serverLabel(config));
      return {
        transport: new StreamableHTTPClientTransport(new URL(config.url!), {
          // Headers may carry a token: a redirect must not take it to another server.
          requestInit: { headers: config.headers, redirect: "error" },
          fetch: capped.fetch,
        }),
        cleanup: () => capped.cancelAll(),
      };
    }
    let argv = [config.command!, ...config.args];
    let cleanup: (() => Promise<void>) | undefined;
    if (config.sandbox) {
      const wrap = this.#options.sandboxCommand;
      if (wrap === undefined) {
        throw new Error("it asks for a sandbox, and bubblewrap is not available here");
      }
      ({ argv, cleanup } = await wrap(config, argv));
    }
    const { StdioProcessTransport } = await import("./stdio_transport.ts");
    const env = { ...this.#options.baseEnv, ...config.env };
    // A server outside the sandbox finds what it starts by name (`#!/usr/bin/env node`) on a
    // PATH without the folders sandboxed commands may write (core/host_programs.ts). So does a
    // project's server in its sandbox: trust pins the files its command line names, and a
    // program found by name in the workspace (an activated `.venv/bin`) would be one a command
    // could swap after the trust.
    const cut = !config.sandbox || config.scope === "project";
    if (cut && env.PATH !== undefined) env.PATH = hostSearchPath(env.PATH);
    const transport = new StdioProcessTransport({
      command: argv[0],
      args: argv.slice(1),
      cwd: config.cwd ?? this.#options.workspace,
      env,
      label: `MCP server "${config.name}"`,
    });
    return { transport, cleanup };
  }
}
