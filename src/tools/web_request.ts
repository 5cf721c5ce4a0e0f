/**
 * One guarded HTTP exchange for the web tools: the host is resolved once per hop, every
 * address it resolves to is checked ({@linkcode blockedAddress}), and the connection is made
 * to the checked address (node:http's `lookup` answers with it), so a DNS answer that changes
 * between check and connect cannot reach another address, while the Host header and the TLS
 * name stay the URL's host. Redirects are followed by hand, each hop checked the same way.
 * The body is read as a stream up to a hard cap, under one deadline for the whole exchange.
 */
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { WebSearchProviderName } from "../config/types.ts";
import { blockedAddress, blockedHostName, isOwnAddress } from "./web_address.ts";

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** A request the web tools make. */
export interface WebRequest {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Hard cap on the body in bytes; more is cut and `truncated` set. Default 5 MiB. */
  maxBytes?: number;
  /** Deadline for the whole exchange, redirects included, in ms. Default 30,000. */
  timeoutMs?: number;
  /** Redirects followed at most (GET only). Default 5. */
  maxRedirects?: number;
  /**
   * Follow redirects only on the first URL's host (its name and port; `http:` to `https:` on
   * the default ports counts as the same): a redirect to another host is not followed, and
   * the answer is the redirect itself, its target in `notFollowed`. For a fetch the person
   * approved by its host: where that host sends it is another approval.
   */
  sameHostRedirects?: boolean;
  signal?: AbortSignal;
  /**
   * Read a PDF answer as text, up to these caps (see `web_pdf.ts`); only the request process
   * does it. Absent: the body stays as it came.
   */
  pdf?: { maxPages?: number; maxChars?: number };
  /**
   * Turn an HTML answer into what the model reads, in this format (see `web_extract.ts`); only
   * the request process does it, where a page that makes the parser work for minutes (elements
   * nested thousands deep) ends with the process at its deadline, never holding tern's own
   * event loop. Absent: the body stays as it came.
   */
  html?: { format: "markdown" | "text" | "html" };
  /**
   * Turn a JSON answer into what the model reads (indented; see `jsonOfAnswer` in
   * `web_extract.ts`); only the request process does it, where a body that takes seconds to
   * parse never holds tern's own event loop. Absent: the body stays as it came.
   */
  json?: boolean;
  /**
   * Read a success's answer as this search provider's results (`searchOfAnswer` in
   * `web_search_providers.ts`); only the request process does it, for the same reason.
   */
  search?: WebSearchProviderName;
}

/** What an HTML page turned into: its title and content, or why it could not be read. */
export type HtmlText =
  | {
    ok: true;
    title: string;
    /** The content, cut at the request process's character cap. */
    content: string;
    /** The content's length in characters before that cut. */
    length: number;
    /** The page's size in bytes. */
    bytes: number;
  }
  | { ok: false; message: string };

/** What a JSON answer turned into: indented, or as it came when it is not valid JSON. */
export interface JsonText {
  valid: boolean;
  /** The content, cut at the request process's character cap. */
  content: string;
  /** The content's length in characters before that cut. */
  length: number;
  /** The answer's size in bytes. */
  bytes: number;
}

/** One search result (`web_search_providers.ts`). */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** The publication or last-update date the provider gave, as it gave it. */
  date?: string;
}

/** What a search provider's answer of `bytes` turned into: its results, or why it has none. */
export type SearchText =
  & { bytes: number }
  & ({ ok: true; id?: string; results: SearchResult[] } | { ok: false; message: string });

/** What a PDF turned into: the text, or why it could not be read. */
export type PdfText =
  | {
    ok: true;
    /** Pages in the document. */
    pages: number;
    /** Pages whose text is in `text` (the first ones). */
    read: number;
    /** The PDF's size in bytes. */
    bytes: number;
    /** The text stopped at a cap (pages, characters or the deadline) before the end. */
    cut: string | undefined;
  }
  | { ok: false; bytes: number; message: string };

/** What came back. */
export interface WebResponse {
  /** The URL of the last hop (after redirects). */
  url: string;
  status: number;
  contentType: string;
  body: Uint8Array;
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
  /** Each URL redirected to, in order. */
  redirects: string[];
  /** The redirect to another host not followed (`sameHostRedirects`): its absolute URL. */
  notFollowed?: string;
  /** Set when a PDF was read as text (`request.pdf`): `body` is then that text. */
  pdf?: PdfText;
  /**
   * Set when an HTML page was extracted (`request.html`); `body` is then empty when it came
   * from the request process.
   */
  html?: HtmlText;
  /**
   * Set when a JSON answer was read (`request.json`); `body` is then empty when it came from
   * the request process.
   */
  json?: JsonText;
  /**
   * Set when a search answer was read (`request.search`); `body` is then empty when it came
   * from the request process.
   */
  search?: SearchText;
}

/**
 * How the guard may be relaxed, for tests only: these are options of
 * {@linkcode guardedRequest}'s caller, never read from a config file or the environment.
 */
export interface GuardOptions {
  /** Resolves host names; default the system resolver (getaddrinfo), every address. */
  resolve?: Resolver;
  /**
   * TEST ONLY: addresses that may be connected to although the guard refuses them (a local
   * test server on 127.0.0.1). Nothing in tern's configuration can set it.
   */
  testAllowAddress?: (address: string) => boolean;
  /**
   * TEST ONLY: a PEM certificate trusted for https besides the system's (a local test server's
   * self-signed one). The request process never sets it; nothing in tern's configuration can.
   */
  testCa?: string;
  /**
   * This machine's own addresses (refused like loopback); default every interface's, read when
   * a host is checked (`Deno.networkInterfaces`: the request process has that permission).
   */
  ownAddresses?: () => readonly string[];
}

/** Every address of this machine's interfaces; none when they cannot be read. */
export function interfaceAddresses(): string[] {
  try {
    return Deno.networkInterfaces().map((found) => found.address);
  } catch {
    return [];
  }
}

/** A refusal of the guard or a limit, as opposed to a network failure. */
export class WebRequestError extends Error {
  constructor(message: string, readonly kind: "refused" | "limit" | "network") {
    super(message);
    this.name = "WebRequestError";
  }
}

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_REDIRECTS = 5;

const systemResolver: Resolver = async (host) => {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/**
 * Checks a URL before anything is sent: http or https only, no user name or password, a
 * host that is not a refused name. Returns the parsed URL. Errors call it `shown` (default
 * `text` quoted).
 * @throws {WebRequestError} naming what is wrong.
 */
export function checkUrl(text: string, shown = `"${text}"`): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebRequestError(`Cannot fetch ${shown}: not a valid absolute URL`, "refused");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    const scheme = KNOWN_SCHEMES.has(url.protocol) ? url.protocol : "another scheme";
    throw new WebRequestError(
      `Cannot fetch ${shown}: only http and https URLs are allowed, not ${scheme}`,
      "refused",
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new WebRequestError(
      `Cannot fetch ${shown}: URLs with credentials (user:password@) are refused`,
      "refused",
    );
  }
  const name = blockedHostName(url.hostname);
  if (name !== undefined) {
    throw new WebRequestError(`Cannot fetch ${shown}: "${url.hostname}" is ${name}`, "refused");
  }
  return url;
}

/** Schemes tern names; any other is a redirect's own text (a scheme may be any word). */
const KNOWN_SCHEMES: ReadonlySet<string> = new Set([
  "http:",
  "https:",
  "file:",
  "data:",
  "javascript:",
  "blob:",
  "about:",
  "ftp:",
  "mailto:",
  "ws:",
  "wss:",
]);

/**
 * Where `url` (a redirect's target: the server's text) leads, in words tern vouches for: its
 * origin, else its scheme when it is a known one ("a file: URL"), else "a URL of another
 * scheme". Errors and facts sit outside the untrusted-content markers.
 */
export function whereTo(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.origin !== "null") return parsed.origin;
    return KNOWN_SCHEMES.has(parsed.protocol)
      ? `a ${parsed.protocol} URL`
      : "a URL of another scheme";
  } catch {
    return "another address";
  }
}

/**
 * How an error names a hop: the URL itself when it is the one requested, else the requested
 * URL and where a redirect chose ({@linkcode whereTo}). The rest of a redirect's target is the
 * server's text, and errors sit outside the untrusted-content markers.
 */
function hopName(requested: string, hop: string): string {
  return hop === requested ? `"${hop}"` : `"${requested}" (redirected to ${whereTo(hop)})`;
}

/**
 * Resolves `host` and checks every address; returns the one to connect to (the first).
 * @throws {WebRequestError} when any address is refused or none was found.
 */
export async function checkedAddress(
  host: string,
  guard: GuardOptions = {},
): Promise<ResolvedAddress> {
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  const literal = isIP(bare);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: bare, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await (guard.resolve ?? systemResolver)(bare);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new WebRequestError(`Cannot resolve "${bare}": ${detail}`, "network");
    }
  }
  if (addresses.length === 0) {
    throw new WebRequestError(`Cannot resolve "${bare}": no addresses`, "network");
  }
  const own = (guard.ownAddresses ?? interfaceAddresses)();
  for (const { address } of addresses) {
    const why = blockedAddress(address) ??
      (isOwnAddress(address, own) ? "this machine's own (another name for loopback)" : undefined);
    if (why !== undefined && !(guard.testAllowAddress?.(address) ?? false)) {
      const via = literal !== 0 ? "" : ` (it resolves to ${address})`;
      throw new WebRequestError(
        `Cannot fetch from "${bare}"${via}: the address is ${why}; ` +
          "the web tools reach public addresses only",
        "refused",
      );
    }
  }
  return addresses[0];
}

/**
 * Makes `request` through the guard, following redirects by hand (each hop checked), with
 * the body capped and one deadline. Never connects to an address it did not check.
 * @throws {WebRequestError} for a refused URL or address, a limit, or a network failure.
 */
export async function guardedRequest(
  request: WebRequest,
  guard: GuardOptions = {},
): Promise<WebResponse> {
  const maxRedirects = request.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
  const redirects: string[] = [];
  let url = checkUrl(request.url);
  let name = `"${url.href}"`;
  const first = url;
  const origin = url.origin;
  for (let hop = 0;; hop++) {
    const address = await withSignal(checkedAddress(url.hostname, guard), signal, timeoutMs);
    // A key sent to the first address (a reader's or a search provider's) never follows a
    // redirect to another origin.
    const sent = url.origin === origin ? request : { ...request, headers: uncredentialed(request) };
    const response = await exchange(url, address, sent, {
      name,
      signal,
      timeoutMs,
      testCa: guard.testCa,
    });
    const location = response.location;
    if (location === undefined || request.method === "POST") {
      return { ...response.result, redirects };
    }
    if (hop >= maxRedirects) {
      throw new WebRequestError(
        `Cannot fetch "${request.url}": more than ${maxRedirects} redirects`,
        "limit",
      );
    }
    let next: string;
    try {
      next = new URL(location, url).href;
    } catch {
      throw new WebRequestError(
        // The server's text is not repeated: it would sit outside the untrusted-content markers.
        `Cannot follow the redirect of ${name}: its location is not a valid URL`,
        "refused",
      );
    }
    if (request.sameHostRedirects && !sameHost(new URL(next), first)) {
      return { ...response.result, redirects, notFollowed: next };
    }
    redirects.push(next);
    name = hopName(request.url, next);
    url = checkUrl(next, name);
  }
}

/** Same host name and port (a scheme's default port counts as none, so `http:` to `https:` is). */
function sameHost(a: URL, b: URL): boolean {
  return a.hostname === b.hostname && a.port === b.port;
}

/** Request headers that carry credentials, by lower-case name (never sent to another origin). */
const CREDENTIAL_HEADERS =
  /^(authorization|proxy-authorization|cookie|x-api-key|x-subscription-token|api-key|x-goog-api-key)$/i;

/** `request`'s headers without the ones that carry credentials. */
function uncredentialed(request: WebRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers ?? {}).filter(([name]) => !CREDENTIAL_HEADERS.test(name)),
  );
}

interface Exchanged {
  result: Omit<WebResponse, "redirects">;
  location?: string;
}

/** How {@linkcode exchange} runs: `name` is how its errors call the URL. */
interface ExchangeOptions {
  name: string;
  signal: AbortSignal;
  timeoutMs: number;
  testCa: string | undefined;
}

/**
 * What went wrong with a connection, in words tern vouches for: a TLS failure by its code only
 * (the message of a name mismatch lists the certificate's names, which the server chose: text
 * of theirs outside the page's markers), anything else as Node words it.
 */
function failureText(error: unknown, url: URL): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the server's certificate is not valid for "${url.hostname}"`;
  }
  if (typeof code === "string" && /TLS|SSL|CERT|SELF_SIGNED|UNABLE_TO_|ISSUER/.test(code)) {
    return `the server's TLS certificate was refused (${code})`;
  }
  return error instanceof Error ? error.message : String(error);
}

function exchange(
  url: URL,
  address: ResolvedAddress,
  request: WebRequest,
  options: ExchangeOptions,
): Promise<Exchanged> {
  const { name, signal, timeoutMs, testCa } = options;
  const maxBytes = request.maxBytes ?? DEFAULT_MAX_BYTES;
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) => {
      if (signal.aborted) {
        reject(
          new WebRequestError(
            request.signal?.aborted
              ? `Fetching ${name} was cancelled`
              : `Cannot fetch ${name}: no complete answer within ${timeoutMs} ms`,
            "limit",
          ),
        );
      } else if (error instanceof WebRequestError) {
        reject(error);
      } else {
        reject(new WebRequestError(`Cannot fetch ${name}: ${failureText(error, url)}`, "network"));
      }
    };
    const req = client.request({
      protocol: url.protocol,
      host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method ?? "GET",
      headers: { "user-agent": "tern-web/1", ...request.headers },
      // The TLS name (SNI and the certificate check) is `host`, the URL's name, not the address.
      ...(testCa !== undefined ? { ca: testCa } : {}),
      // The connection goes to the address that was checked, whatever DNS says now.
      lookup: ((_host, options, callback) => {
        const answer = callback as (...args: unknown[]) => void;
        if (options?.all) answer(null, [address]);
        else answer(null, address.address, address.family);
      }) as LookupFunction,
      signal,
    }, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && typeof location === "string") {
        res.resume();
        resolve({
          result: {
            url: url.href,
            status,
            contentType: "",
            body: new Uint8Array(),
            truncated: false,
          },
          location,
        });
        return;
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      let truncated = false;
      const finish = () => {
        const body = new Uint8Array(Math.min(size, maxBytes));
        let at = 0;
        for (const chunk of chunks) {
          const part = chunk.subarray(0, Math.min(chunk.length, body.length - at));
          body.set(part, at);
          at += part.length;
        }
        resolve({
          result: {
            url: url.href,
            status,
            contentType: String(res.headers["content-type"] ?? ""),
            body,
            truncated,
          },
        });
      };
      res.on("data", (chunk: Uint8Array) => {
        if (truncated) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size > maxBytes) {
          truncated = true;
          finish();
          req.destroy();
        }
      });
      res.on("end", () => {
        if (!truncated) finish();
      });
      res.on("error", fail);
    });
    req.on("error", fail);
    // A server that switches protocols (HTTP 101) leaves no HTTP answer to read.
    req.on("upgrade", (res: http.IncomingMessage, socket: { destroy(): void }) => {
      socket.destroy();
      fail(
        new WebRequestError(
          `Cannot fetch ${name}: the server switched protocols (HTTP ${res.statusCode}), ` +
            "which the web tools do not read",
          "network",
        ),
      );
    });
    // The deadline ends the exchange even where destroying the request emits no error.
    signal.addEventListener("abort", () => {
      req.destroy();
      fail(signal.reason);
    }, { once: true });
    req.end(request.body);
  });
}

function withSignal<T>(promise: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  if (signal.aborted) {
    return Promise.reject(new WebRequestError(`No answer within ${timeoutMs} ms`, "limit"));
  }
  return new Promise((resolve, reject) => {
    const onAbort = () =>
      reject(new WebRequestError(`Cannot resolve the host within ${timeoutMs} ms`, "limit"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
