/**
 * One MCP server's connection and its lifecycle: NEW → STARTING → READY or FAILED → CLOSED.
 * `start()` runs `initialize` (the SDK checks the protocol version and sends
 * `notifications/initialized`) and `tools/list` within the startup timeout; it never throws: a
 * server that fails is FAILED with the reason, and the agent carries on without it. The SDK is
 * imported on the first start, so runs without MCP servers never load it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import { COPY, copyJson } from "../core/json_depth.ts";
import { netDeniedMessage } from "../core/net_denied.ts";
import { signalProcessGroup } from "../core/process_group.ts";
import { visibleText } from "../core/terminal_text.ts";
import type { McpCallResult } from "./results.ts";
import { type McpServerConfig, serverLabel, serverSecrets } from "./types.ts";

/** Where a server is in its life. */
export type McpState = "NEW" | "STARTING" | "READY" | "FAILED" | "CLOSED";

/** One tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; title?: string };
}

/** A transport for one start, and what to release once it is closed (a sandbox's tmp). */
export interface TransportHandle {
  transport: Transport;
  cleanup?: () => Promise<void>;
}

export interface ConnectionOptions {
  config: McpServerConfig;
  /** Builds a fresh transport for each start. */
  connect: (config: McpServerConfig) => Promise<TransportHandle>;
  /** tern's version, sent as the client's. */
  clientVersion: string;
  /** Told when the state or the tool list changed. */
  onChange?: () => void;
}

/** Why a call failed, for the tool adapter to map onto an error code. */
export class McpCallError extends Error {
  override name = "McpCallError";
  readonly kind: "timeout" | "closed" | "cancelled" | "protocol" | "not-ready";
  constructor(kind: McpCallError["kind"], message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/** Most tools/list pages read from one server; a server with more is FAILED. */
const MAX_TOOL_PAGES = 100;

/**
 * Most tools one server may list; a server with more is FAILED. Past it a list only costs: a
 * million small tools over 20 pages took 20 s and 1.4 GB of memory before the first request,
 * and no model chooses well among more than a few thousand.
 */
export const MAX_TOOLS = 10_000;

/**
 * Most characters of tool definitions (names, descriptions, schemas as JSON) one listing may
 * hold; a server with more is FAILED at start, and a refresh past it keeps the tools it had.
 * Real servers list well under a MiB: one page may be a 16 MiB line, and 100 such pages held
 * tern at 1.75 GB.
 */
export const MAX_TOOLS_CHARS = 16 * 1024 * 1024;

/**
 * Least time between the starts of two listings of one server's tools after `list_changed`: a
 * server asking again after each listing (or without pause) would otherwise keep tern reading up
 * to `MAX_TOOLS_CHARS` as fast as it answers.
 */
export const MIN_REFRESH_INTERVAL_MS = 1_000;

const TIMEOUT_CODE = -32001;

/**
 * Most characters of a server's error shown: a server's words (an HTTP error's body, its
 * stderr's tail, which keeps 4,000) on one line of `tern mcp list` or a warning; a body of
 * 16 MiB made that one line.
 */
export const MAX_ERROR_CHARS = 5_000;

/** The shortest secret masked, as the session's masker (shorter ones would mask words). */
const MIN_SECRET_CHARS = 8;

export class McpConnection {
  readonly config: McpServerConfig;
  #options: ConnectionOptions;
  #state: McpState = "NEW";
  #error: string | undefined;
  #tools: McpToolInfo[] = [];
  #client: Client | undefined;
  #handle: TransportHandle | undefined;
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  /** Aborts a start in progress (its timer, or `close()`). */
  #startAbort: AbortController | undefined;
  /** The last error the transport or the protocol reported. */
  #lastError: string | undefined;
  /** The refresh of the tool list under way after `list_changed`; at most one at a time. */
  #refreshing: Promise<void> | undefined;
  /** Another `list_changed` came while a listing (the start's or a refresh) was under way. */
  #changedMeanwhile = false;
  /** When the last listing started (`performance.now()`), for `MIN_REFRESH_INTERVAL_MS`. */
  #listedAt = 0;
  /** Ends the wait before the next refresh at once (the connection is shutting down). */
  #wake: (() => void) | undefined;
  /** A digest of the tools as last listed: a listing that holds the same tells nobody. */
  #listedDigest = "";
  /** The secrets the config hands the server, longest first (see {@linkcode masked}). */
  #secrets: string[];
  /** The server's own name of each listed tool whose name held a secret (see `#maskedTool`). */
  #ownNames = new WeakMap<McpToolInfo, string>();

  constructor(options: ConnectionOptions) {
    this.config = options.config;
    this.#options = options;
    this.#secrets = serverSecrets(options.config).filter((value) =>
      value.length >= MIN_SECRET_CHARS
    ).sort((a, b) => b.length - a.length);
  }

  get name(): string {
    return this.config.name;
  }

  /** How tern names the server in its messages (with an HTTP server's origin: `serverLabel`). */
  get label(): string {
    return serverLabel(this.config);
  }

  get state(): McpState {
    return this.#state;
  }

  /**
   * Why the server is FAILED (or the last error it reported), on one line with its controls
   * shown: it quotes the server's own words (an error message, its stderr), and a line break in
   * them would forge a line of `tern mcp list` or of a run's warnings. A secret the config hands
   * the server is masked wherever the server's words echo it (an HTTP 401's body quoting the
   * `Authorization` header), and the text is cut at {@linkcode MAX_ERROR_CHARS}.
   */
  get error(): string | undefined {
    return this.#error === undefined ? undefined : visibleText(this.#shown(this.#error));
  }

  /**
   * The tools of a READY server; empty otherwise. What they say passed {@linkcode masked}: a
   * server echoing its token in a name, a description or a schema would have it shown by
   * `tern mcp tools` and sent to the model with every request.
   */
  get tools(): readonly McpToolInfo[] {
    return this.#state === "READY" ? this.#tools : [];
  }

  /** The name and version the server gave, once READY (masked as {@linkcode tools}). */
  get serverInfo(): { name: string; version: string } | undefined {
    const info = this.#client?.getServerVersion();
    return info && { ...info, name: this.masked(info.name), version: this.masked(info.version) };
  }

  /** `text` with every secret the config hands the server as `[REDACTED]`. Never throws. */
  masked(text: string): string {
    for (const secret of this.#secrets) text = text.replaceAll(secret, "[REDACTED]");
    return text;
  }

  /** A server's words as tern passes them on: {@linkcode masked}, cut at MAX_ERROR_CHARS. */
  #shown(text: string): string {
    text = this.masked(text);
    const more = text.length - MAX_ERROR_CHARS;
    return more > 0 ? `${text.slice(0, MAX_ERROR_CHARS)}… (${more} more characters)` : text;
  }

  /**
   * `tool` with every secret masked in its strings, keys included (see {@linkcode tools}); the
   * same object when it holds none. `json` is the tool as JSON, for the quick look.
   */
  #maskedTool(tool: McpToolInfo, json: string): McpToolInfo {
    const held = this.#secrets.some((secret) =>
      json.includes(secret) || json.includes(JSON.stringify(secret).slice(1, -1))
    );
    if (!held) return tool;
    const copy = copyJson(tool, (value) => typeof value === "string" ? this.masked(value) : COPY);
    // Keys, in the copy (its own objects): without recursion, as deep as a schema may nest.
    const stack = [copy];
    while (stack.length > 0) {
      const next = stack.pop();
      if (typeof next !== "object" || next === null) continue;
      const entries = Object.entries(next);
      if (!Array.isArray(next) && entries.some(([key]) => this.masked(key) !== key)) {
        for (const [key] of entries) delete (next as Record<string, unknown>)[key];
        for (const [key, value] of entries) {
          Object.defineProperty(next, this.masked(key), {
            value,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
      }
      for (const [, value] of entries) stack.push(value);
    }
    const masked = copy as McpToolInfo;
    if (masked.name !== tool.name) this.#ownNames.set(masked, tool.name);
    return masked;
  }

  /** The name the server gave the listed tool `tool` names (masked as {@linkcode tools}). */
  #ownName(tool: string): string {
    const listed = this.#tools.find((info) => info.name === tool);
    return (listed && this.#ownNames.get(listed)) ?? tool;
  }

  /** Starts the server once; later calls share the first. Never throws. */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    if (this.state !== "NEW") return;
    this.#set("STARTING");
    const { config } = this;
    const timeout = config.startupTimeoutMs;
    const abort = new AbortController();
    this.#startAbort = abort;
    const timer = setTimeout(() => abort.abort(), timeout);
    let stop: (() => void) | undefined;
    try {
      const [{ Client }, handle] = await Promise.all([
        import("@modelcontextprotocol/sdk/client"),
        this.#options.connect(config),
      ]);
      this.#handle = handle;
      if (this.#closing) throw new Error("closed while starting");
      // The SDK gives the signal to `initialize` alone: an HTTP server that never answers the
      // POST of `notifications/initialized` held the start, and `close()`, for ever. Closing the
      // transport fails whatever it still waits for.
      stop = () => void handle.transport.close().catch(() => {});
      abort.signal.addEventListener("abort", stop, { once: true });
      const client = new Client({ name: "tern", version: this.#options.clientVersion }, {
        capabilities: {},
        jsonSchemaValidator: UNCHECKED_OUTPUT,
        listChanged: {
          // The SDK's own refresh reads only the first page: tern reads them all. Its debounce
          // would never refresh while a server sends changes less than 300 ms apart; tern's
          // own pacing reads at most once per MIN_REFRESH_INTERVAL_MS instead.
          tools: {
            autoRefresh: false,
            debounceMs: 0,
            onChanged: () => this.#toolsChanged(client),
          },
        },
      });
      this.#client = client;
      client.onerror = (error) => this.#lastError = error.message;
      client.onclose = () => this.#closed();
      await client.connect(handle.transport, { signal: abort.signal, timeout });
      const tools = await this.#listTools(client, abort.signal, timeout);
      if (this.#state !== "STARTING") return;
      this.#tools = tools;
      this.#listedDigest = tools.digest;
      this.#set("READY");
      // A change told while the first listing ran may not be in it.
      if (this.#changedMeanwhile) this.#toolsChanged(client);
    } catch (error) {
      const reason = this.#closing
        ? "closed while starting"
        : abort.signal.aborted
        ? `did not finish starting within ${timeout} ms${this.#detail()}`
        : startError(error, this.#lastError, this.label);
      await this.#fail(reason);
    } finally {
      clearTimeout(timer);
      if (stop !== undefined) abort.signal.removeEventListener("abort", stop);
    }
  }

  /**
   * Calls `tool` (its name as {@linkcode tools} gives it) with `args`. Errors are masked and cut
   * as {@linkcode error} is. @throws {McpCallError}
   */
  async callTool(tool: string, args: unknown, signal: AbortSignal): Promise<McpCallResult> {
    const client = this.#client;
    if (this.#state !== "READY" || client === undefined) {
      throw new McpCallError(
        "not-ready",
        `${this.label} is ${this.#state}${this.#error ? `: ${this.error}` : ""}`,
      );
    }
    const timeout = this.config.requestTimeoutMs;
    try {
      return await client.callTool(
        { name: this.#ownName(tool), arguments: args as Record<string, unknown> },
        undefined,
        { signal, timeout },
      ) as McpCallResult;
    } catch (error) {
      if (signal.aborted) {
        throw new McpCallError("cancelled", `The call to "${tool}" was cancelled`, {
          cause: error,
        });
      }
      const code = (error as { code?: unknown }).code;
      if (code === TIMEOUT_CODE) {
        throw new McpCallError(
          "timeout",
          `${this.label} did not answer "${tool}" within ${timeout} ms`,
          { cause: error },
        );
      }
      // Closed by the connection's state, never by an error code: a server's own error may
      // carry the SDK's "connection closed" code (-32000, JSON-RPC's generic server error).
      // The SDK tells `onclose` (which leaves READY) before it fails the pending calls.
      if (this.#state !== "READY") {
        throw new McpCallError(
          "closed",
          this.#shown(
            `${this.label} closed the connection during "${tool}"${this.#detail()}`,
          ),
          { cause: error },
        );
      }
      throw new McpCallError(
        "protocol",
        this.#shown(`${this.label}: ${messageOf(error)}`),
        { cause: error },
      );
    }
  }

  /**
   * Kills a stdio server's process group at once, synchronously: for a process about to exit
   * (a second Ctrl-C) that cannot wait for `close()`.
   */
  kill(): void {
    const pid = (this.#handle?.transport as { pid?: number } | undefined)?.pid;
    if (pid !== undefined) signalProcessGroup(pid, "SIGKILL");
  }

  /** Closes the connection and ends the server (a stdio server's whole process group). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#startAbort?.abort();
    await this.#starting?.catch(() => {});
    await this.#shutdown();
    this.#set("CLOSED");
  }

  async #shutdown(): Promise<void> {
    const client = this.#client;
    const handle = this.#handle;
    this.#client = undefined;
    this.#handle = undefined;
    this.#wake?.();
    if (client) {
      client.onclose = undefined;
      await client.close().catch(() => {});
    }
    // The SDK lets go of a transport once it closed (after a failed initialize, say), so the
    // transport is closed here too: its close() waits until the server's processes are gone.
    await handle?.transport.close().catch(() => {});
    await handle?.cleanup?.().catch(() => {});
  }

  async #listTools(
    client: Client,
    signal: AbortSignal | undefined,
    timeout: number,
  ): Promise<McpToolInfo[] & { digest: string }> {
    const tools: McpToolInfo[] = [];
    const names = new Set<string>();
    let cursor: string | undefined;
    const cursors = new Set<string>();
    let chars = 0;
    const jsons: string[] = [];
    this.#listedAt = performance.now();
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout,
      });
      if (tools.length + page.tools.length > MAX_TOOLS) {
        const most = MAX_TOOLS.toLocaleString("en-US");
        throw new Error(`tools/list has more than ${most} tools, the most tern takes`);
      }
      for (const tool of page.tools) {
        const json = JSON.stringify(tool);
        chars += json.length;
        jsons.push(json);
        if (chars > MAX_TOOLS_CHARS) {
          throw new Error(
            `tools/list has more than ${MAX_TOOLS_CHARS / 1024 / 1024} MiB of tool definitions, ` +
              "the most tern takes",
          );
        }
        const listed = this.#maskedTool(tool as McpToolInfo, json);
        // A name listed again is left out: the model, the gate and `tern mcp tools` each took
        // another of the two (another description, schema or readOnlyHint) for that one name.
        if (names.has(listed.name)) continue;
        names.add(listed.name);
        tools.push(listed);
      }
      cursor = page.nextCursor;
      // A server that never stops paging (or pages in a circle) must not hold tern forever.
      if (cursor !== undefined && (cursors.has(cursor) || cursors.size >= MAX_TOOL_PAGES - 1)) {
        throw new Error(
          cursors.has(cursor)
            ? `tools/list gave the cursor "${cursor.slice(0, 80)}" twice`
            : `tools/list has more than ${MAX_TOOL_PAGES} pages`,
        );
      }
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
    // What it listed, as a SHA-256: a refresh that lists the same changes nothing.
    const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(jsons.join("\n")));
    const digest = Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0"))
      .join("");
    return Object.assign(tools, { digest });
  }

  /**
   * `list_changed`: the tools are read again once the server is READY, by one refresh at a
   * time, at least MIN_REFRESH_INTERVAL_MS after the listing before; changes told meanwhile
   * make that refresh list once more, however many came (each listing can be large, and
   * overlapping ones each held theirs).
   */
  #toolsChanged(client: Client): void {
    this.#changedMeanwhile = true;
    if (this.#state !== "READY" || this.#refreshing !== undefined) return;
    this.#refreshing = this.#refreshTools(client).finally(() => this.#refreshing = undefined);
  }

  /** Reads the tools again until no change came during a listing. Never throws. */
  async #refreshTools(client: Client): Promise<void> {
    while (this.#changedMeanwhile && client === this.#client && this.#state === "READY") {
      const wait = this.#listedAt + MIN_REFRESH_INTERVAL_MS - performance.now();
      if (wait > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = undefined;
        continue;
      }
      this.#changedMeanwhile = false;
      try {
        const tools = await this.#listTools(client, undefined, this.config.requestTimeoutMs);
        if (client === this.#client) this.#setTools(tools);
      } catch (error) {
        this.#lastError = messageOf(error);
      }
    }
  }

  #setTools(tools: McpToolInfo[] & { digest: string }): void {
    if (this.#state !== "READY" || tools.digest === this.#listedDigest) return;
    this.#tools = tools;
    this.#listedDigest = tools.digest;
    this.#options.onChange?.();
  }

  /** The connection closed by itself (the server exited, the HTTP session ended). */
  #closed(): void {
    if (this.#closing || this.#state === "FAILED") return;
    const reason = `the connection closed${this.#detail()}`;
    if (this.#state === "READY") void this.#fail(reason);
    // While STARTING, the pending request fails and `#start` reports it.
  }

  async #fail(reason: string): Promise<void> {
    this.#error = reason;
    this.#set("FAILED");
    await this.#shutdown();
  }

  #detail(): string {
    return this.#lastError ? ` (${this.#lastError})` : "";
  }

  #set(state: McpState): void {
    if (this.#state === state || this.#state === "CLOSED") return;
    this.#state = state;
    this.#options.onChange?.();
  }
}

function startError(error: unknown, lastError: string | undefined, label: string): string {
  const denied = netDeniedMessage(error, label);
  if (denied) return denied;
  const message = messageOf(error);
  if (lastError && /connection closed/i.test(message)) return `the connection closed: ${lastError}`;
  return lastError && lastError !== message ? `${message} (${lastError})` : message;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The SDK's check of a tool's result against the tool's own `outputSchema`: none. tern hands a
 * result to the model as text and never acts on its structure, so the check would protect
 * nothing, while it would run the server's schema in tern's own process: its patterns on V8's
 * backtracking RegExp (`^(a+)+$` freezes tern on a crafted result) and its compile, for every
 * listed tool, as the list arrives. Arguments are checked before a call, with linear-time patterns
 * (mcp_tool.ts).
 */
type OutputValidator = NonNullable<
  NonNullable<ConstructorParameters<typeof Client>[1]>["jsonSchemaValidator"]
>;
const UNCHECKED_OUTPUT: OutputValidator = {
  getValidator: (() => (input: unknown) => ({
    valid: true,
    data: input,
    errorMessage: undefined,
  })) as OutputValidator["getValidator"],
};
