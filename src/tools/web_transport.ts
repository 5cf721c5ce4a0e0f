/**
 * How the web tools reach the network. tern's own process may connect only to its model
 * hosts (the launcher's `--allow-net`), so each web request runs in a short-lived Deno process
 * of its own (`web_request_main.ts`) with the network and nothing else: no file writes, no
 * environment, no subprocesses. That process applies the address guard itself
 * (`guardedRequest`, without any relaxation); the request goes in on stdin, the answer comes
 * back as one JSON line. A PDF is read as text there too (`web_pdf.ts`), an HTML page
 * extracted (`web_extract.ts`), and tern kills the process once it outlives the request's
 * deadline by a margin, whatever it is doing. Tests
 * inject an in-process transport instead.
 */
import { Buffer } from "node:buffer";
import { entryArgv } from "../core/packaging.ts";
import { defaultConfigPath } from "../sandbox/worker/flags.ts";
import {
  type HtmlText,
  type PdfText,
  type WebRequest,
  WebRequestError,
  type WebResponse,
} from "./web_request.ts";
import { denoDirEnv } from "../core/deno_dir_env.ts";

/** Makes one guarded request. */
export type WebTransport = (request: WebRequest) => Promise<WebResponse>;

/** The request process's JavaScript heap at most, in MiB. */
export const REQUEST_HEAP_MB = 512;

/**
 * The argv of the request process: network only. tern's own deno.json (named, so a project's
 * deno.json in the working directory is never read) resolves unpdf from tern's node_modules
 * and lockfile; `--cached-only` and `--no-remote` keep it from downloading code.
 */
export function webRequestArgv(
  denoPath = Deno.execPath(),
  configPath: string | null = defaultConfigPath(),
): string[] {
  return entryArgv(
    "web-request",
    [
      "--no-prompt",
      "--quiet",
      "--cached-only",
      "--no-remote",
      ...(configPath === null ? ["--no-config", "--no-lock"] : ["--config", configPath]),
      // A hostile PDF (or body) cannot take the machine's memory: the process dies instead.
      `--v8-flags=--max-old-space-size=${REQUEST_HEAP_MB}`,
      "--allow-net",
      // getaddrinfo reads the resolver's configuration.
      "--allow-read=/etc/hosts,/etc/resolv.conf,/etc/nsswitch.conf,/etc/gai.conf",
    ],
    [],
    denoPath,
  );
}

/** The JSON line the request process prints. */
export type WebAnswer =
  | {
    ok: true;
    url: string;
    status: number;
    contentType: string;
    truncated: boolean;
    redirects: string[];
    body: string;
    pdf?: PdfText;
    html?: HtmlText;
  }
  | { ok: false; kind: WebRequestError["kind"]; message: string };

/** Time the request process is given beyond the request's deadline (start-up, the answer). */
export const KILL_MARGIN_MS = 10_000;

/**
 * A transport that runs each request in its own network-only Deno process, killed when it
 * outlives the request's deadline (default 30,000 ms) by {@linkcode KILL_MARGIN_MS}.
 */
export function processTransport(
  denoPath?: string,
  killMarginMs = KILL_MARGIN_MS,
): WebTransport {
  return async (request) => {
    const [deno, ...args] = webRequestArgv(denoPath);
    const limitMs = (request.timeoutMs ?? 30_000) + killMarginMs;
    const overdue = AbortSignal.timeout(limitMs);
    const child = new Deno.Command(deno, {
      args,
      clearEnv: true,
      // Deno's cache (the launcher's DENO_DIR), so the script is not compiled again each time.
      env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...denoDirEnv() },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      signal: request.signal ? AbortSignal.any([request.signal, overdue]) : overdue,
    }).spawn();
    const { signal: _signal, ...sent } = request;
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(sent)));
    await writer.close();
    const { stdout, stderr, code } = await child.output();
    if (request.signal?.aborted) {
      throw new WebRequestError(`Fetching "${request.url}" was cancelled`, "limit");
    }
    if (overdue.aborted) {
      throw new WebRequestError(
        `Cannot fetch "${request.url}": the request process gave no answer within ${limitMs} ms ` +
          "and was stopped",
        "limit",
      );
    }
    const line = new TextDecoder().decode(stdout).trim().split("\n").at(-1) ?? "";
    let answer: WebAnswer;
    try {
      answer = JSON.parse(line);
    } catch {
      const detail = new TextDecoder().decode(stderr).trim().split("\n").slice(-3).join(" ");
      throw new WebRequestError(
        `Cannot fetch "${request.url}": the request process failed (exit ${code}): ${detail}`,
        "network",
      );
    }
    if (!answer.ok) throw new WebRequestError(answer.message, answer.kind);
    return {
      url: answer.url,
      status: answer.status,
      contentType: answer.contentType,
      truncated: answer.truncated,
      redirects: answer.redirects,
      body: new Uint8Array(Buffer.from(answer.body, "base64")),
      ...(answer.pdf ? { pdf: answer.pdf } : {}),
      ...(answer.html ? { html: answer.html } : {}),
    };
  };
}
