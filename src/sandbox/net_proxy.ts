/**
 * The filtering HTTP proxy of shell commands with host grants. It runs on the host, in a
 * process of its own per command (`net_proxy_main.ts`: tern's own process may connect only to
 * its model hosts), on a Unix socket that the command's forwarder (see `net_forwarder.ts`)
 * relays to, and lets through only the granted hosts: `CONNECT host:port` (https and any TLS) and
 * absolute-URI requests (`GET http://host/path`, plain http). Anything else is refused with
 * 403 (a host not granted) or 400 (not a proxy request). It records each host it connected a
 * command to, and each it refused, for the audit log.
 */
import { entryArgv } from "../core/packaging.ts";

/** A host and port a command asked for, as the proxy records it (`host:port`, `[v6]:port`). */
export type HostPort = string;

/** The proxy of one command. */
export interface NetProxy {
  /** The Unix socket it listens on. */
  readonly socket: string;
  /** The hosts it connected the command to, first use first. */
  readonly connected: readonly HostPort[];
  /** The hosts it refused (not granted), first refusal first. */
  readonly refused: readonly HostPort[];
  /** Stops listening, cuts every connection still open and removes the socket. Never throws. */
  close(): Promise<void>;
}

/** A host the proxy connected a command to, or refused. */
export interface ProxyEvent {
  kind: "connected" | "refused";
  host: HostPort;
}

/** Bytes of request head (request line and headers) the proxy reads at most. */
const MAX_HEAD = 64 * 1024;

/**
 * Starts a proxy on the Unix socket `socket` (its folder must exist, private to tern) that lets
 * through the hosts of `allow` (see {@linkcode hostAllowed}).
 * @throws when the socket cannot be made.
 */
export function startNetProxy(
  socket: string,
  allow: readonly string[],
  onEvent?: (event: ProxyEvent) => void,
): NetProxy {
  const listener = Deno.listen({ transport: "unix", path: socket });
  const connected = new Set<HostPort>();
  const refused = new Set<HostPort>();
  const open = new Set<Deno.Conn>();
  const track = (conn: Deno.Conn) => {
    open.add(conn);
    return conn;
  };
  const serving = (async () => {
    for await (const conn of listener) {
      serve(track(conn), { allow, connected, refused, track, onEvent }).catch(() => {}).finally(
        () => {
          open.delete(conn);
          safeClose(conn);
        },
      );
    }
  })().catch(() => {});
  return {
    socket,
    get connected() {
      return [...connected];
    },
    get refused() {
      return [...refused];
    },
    async close() {
      safeClose(listener);
      for (const conn of open) safeClose(conn);
      await serving;
      await Deno.remove(socket).catch(() => {});
    },
  };
}

/**
 * Whether `host:port` is granted by `allow`, whose entries are `host` (any port) or
 * `host:port` (`[v6]` or `[v6]:port` for IPv6), the way Deno's `--allow-net` reads them.
 * Hosts compare as a URL parser normalizes them (case, a trailing dot, `0x7f.1` and other
 * spellings of an IPv4 address), so no other spelling of a granted or refused host differs.
 */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const wanted = normalHost(host);
  if (wanted === null) return false;
  return allow.some((entry) => {
    const granted = parseAuthority(entry, true);
    return granted !== null && granted.host === wanted &&
      (granted.port === null || granted.port === port);
  });
}

/**
 * The argv that starts the proxy (`net_proxy_main.ts`) on `socket` for `allow`: Deno with
 * network access to exactly the granted hosts and the socket (a second check under the
 * proxy's own), nothing else. Entries with a comma (which Deno would read as two) are left out.
 */
export function proxyArgv(
  socket: string,
  allow: readonly string[],
  denoPath = Deno.execPath(),
): string[] {
  const hosts = allow.filter((entry) => !entry.includes(",") && entry !== "");
  return entryArgv(
    "net-proxy",
    [
      "--no-prompt",
      "--no-config",
      "--no-lock",
      `--allow-net=${[...hosts, `unix:${socket}`].join(",")}`,
      `--allow-read=${socket}`,
      `--allow-write=${socket}`,
    ],
    [socket, ...hosts],
    denoPath,
  );
}

const PROXY_NAMES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"].flatMap((name) => [
  name,
  name.toLowerCase(),
]);

/**
 * The argv that starts the forwarder for a proxy on `socket`, listening on `port` of the
 * command's loopback: Deno (this executable) with only that address and that socket allowed,
 * through `env` (found on PATH) without the proxy variables.
 */
export function forwarderArgv(
  socket: string,
  port: number,
  denoPath = Deno.execPath(),
  envPath = "env",
): string[] {
  return [
    // It starts with the command's environment: not its proxy variables (Deno's own update
    // check would go through the proxy and show in the audit as the command's). `envPath` is
    // best absolute: nsenter looks a bare name up on the command's PATH, on the host.
    envPath,
    ...PROXY_NAMES.flatMap((name) => ["-u", name]),
    "DENO_NO_UPDATE_CHECK=1",
    "DENO_NO_PACKAGE_JSON=1",
    ...entryArgv(
      "net-forwarder",
      [
        "--no-prompt",
        "--no-config",
        "--no-lock",
        `--allow-net=127.0.0.1:${port},unix:${socket}`,
        `--allow-read=${socket}`,
        `--allow-write=${socket}`,
      ],
      [String(port), socket],
      denoPath,
    ),
  ];
}

interface ServeState {
  allow: readonly string[];
  connected: Set<HostPort>;
  refused: Set<HostPort>;
  track: (conn: Deno.Conn) => Deno.Conn;
  onEvent?: (event: ProxyEvent) => void;
}

async function serve(client: Deno.Conn, state: ServeState): Promise<void> {
  const head = await readHead(client);
  if (head === null) return;
  const request = parseRequest(head.text);
  if (request === null) return reply(client, 400, "Bad Request", "not a proxy request");
  const label = request.host.includes(":")
    ? `[${request.host}]:${request.port}`
    : `${request.host}:${request.port}`;
  if (!hostAllowed(state.allow, request.host, request.port)) {
    state.refused.add(label);
    state.onEvent?.({ kind: "refused", host: label });
    return reply(client, 403, "Forbidden", `host ${label} is not granted to this command`);
  }
  let upstream: Deno.Conn;
  try {
    upstream = state.track(await Deno.connect({ hostname: request.host, port: request.port }));
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return reply(client, 502, "Bad Gateway", `cannot connect to ${label}: ${detail}`);
  }
  state.connected.add(label);
  state.onEvent?.({ kind: "connected", host: label });
  const encoder = new TextEncoder();
  try {
    if (request.kind === "connect") {
      await writeAll(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
    } else {
      await writeAll(upstream, encoder.encode(request.head));
    }
    if (head.rest.length > 0) await writeAll(upstream, head.rest);
    await Promise.allSettled([
      client.readable.pipeTo(upstream.writable),
      upstream.readable.pipeTo(client.writable),
    ]);
  } finally {
    safeClose(upstream);
  }
}

type ProxyRequest =
  | { kind: "connect"; host: string; port: number }
  | { kind: "http"; host: string; port: number; head: string };

/** The request head `text` as a proxy request, or null when it is none. */
function parseRequest(text: string): ProxyRequest | null {
  const [line, ...headers] = text.split("\r\n");
  const parts = line.split(" ");
  if (parts.length !== 3 || !/^HTTP\/1\.[01]$/.test(parts[2])) return null;
  const [method, target, version] = parts;
  if (method === "CONNECT") {
    const authority = parseAuthority(target, false);
    return authority === null || authority.port === null
      ? null
      : { kind: "connect", host: authority.host, port: authority.port };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || url.username !== "" || url.password !== "") return null;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? 80 : Number(url.port);
  // The Host header names the granted host, whatever the client wrote: no virtual host on
  // the same server (a CDN) can be reached under a granted name.
  const kept = headers.filter((header) =>
    !/^(host|connection|proxy-connection|proxy-authorization|keep-alive)\s*:/i.test(header)
  );
  const rewritten = [
    `${method} ${url.pathname}${url.search} ${version}`,
    `Host: ${url.host}`,
    "Connection: close",
    ...kept,
  ];
  return { kind: "http", host, port, head: `${rewritten.join("\r\n")}\r\n\r\n` };
}

/**
 * `host`, `host:port`, `[v6]` or `[v6]:port` as a normalized host and port (null when absent,
 * allowed only when `portOptional`), or null when it is not one.
 */
function parseAuthority(
  text: string,
  portOptional: boolean,
): { host: string; port: number | null } | null {
  const match = /^(\[[^\]]+\]|[^:\[\]\/@\s]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return null;
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port === null && !portOptional) return null;
  if (port !== null && (port < 1 || port > 65535)) return null;
  const host = normalHost(match[1]);
  return host === null ? null : { host, port };
}

/** A host as the URL parser normalizes it, without IPv6 brackets; null when it is not one. */
function normalHost(host: string): string | null {
  const bare = host.replace(/^\[|\]$/g, "");
  const written = bare.includes(":") ? `[${bare}]` : bare;
  try {
    const url = new URL(`http://${written}/`);
    if (url.port !== "" || url.pathname !== "/") return null;
    return url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  } catch {
    return null;
  }
}

/** The request head up to its blank line, and what came after it; null when there is none. */
async function readHead(conn: Deno.Conn): Promise<{ text: string; rest: Uint8Array } | null> {
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(8192);
  for (;;) {
    const end = indexOfBlankLine(buffer);
    if (end >= 0) {
      return {
        text: new TextDecoder().decode(buffer.subarray(0, end)),
        rest: buffer.slice(end + 4),
      };
    }
    if (buffer.length > MAX_HEAD) return null;
    const n = await conn.read(chunk);
    if (n === null) return null;
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
  }
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

async function reply(conn: Deno.Conn, status: number, text: string, detail: string) {
  const body = `${detail}\n`;
  const message = `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\n` +
    `Content-Length: ${new TextEncoder().encode(body).length}\r\nConnection: close\r\n\r\n${body}`;
  await writeAll(conn, new TextEncoder().encode(message)).catch(() => {});
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

function safeClose(closer: { close(): void }): void {
  try {
    closer.close();
  } catch {
    // Closed already.
  }
}
