/**
 * How the web tools reach the network. tern's own process may connect only to its model
 * hosts (the launcher's `--allow-net`), so each web request runs in a short-lived Deno process
 * of its own (`web_request_main.ts`) with the network and nothing else: no file writes, no
 * environment, no subprocesses. That process applies the address guard itself
 * (`guardedRequest`, without any relaxation); the request goes in on stdin, the answer comes
 * back as one JSON line. A PDF is read as text there too (`web_pdf.ts`), an HTML page
 * extracted (`web_extract.ts`), under a memory cap, and tern kills the process once it
 * outlives the request's deadline by a margin or its answer grows too long, whatever it is
 * doing. A few run at once; more wait. Tests inject an in-process transport instead.
 */
import { Buffer } from "node:buffer";
import { entryArgv } from "../core/packaging.ts";
import { defaultConfigPath } from "../sandbox/worker/flags.ts";
import {
  type HtmlText,
  type JsonText,
  type PdfText,
  type SearchText,
  type WebRequest,
  WebRequestError,
  type WebResponse,
} from "./web_request.ts";
import { ownDenoEnv } from "../core/deno_dir_env.ts";
import { readCapped } from "../core/read_capped.ts";

/** Makes one guarded request. */
export type WebTransport = (request: WebRequest) => Promise<WebResponse>;

/** The request process's JavaScript heap at most, in MiB. */
export const REQUEST_HEAP_MB = 512;

/**
 * The request process's memory at most (RLIMIT_DATA), in MiB. The heap cap alone does not hold
 * what pdf.js decodes (ArrayBuffers: a 1.5 MB PDF inflated to 3 GB); V8 reserves about 512 MiB
 * of this at start, and a 5 MiB page takes about 700 MiB to extract.
 */
export const REQUEST_MEMORY_MB = 1536;

/** Web requests one tern process runs at once; more wait for a free slot. */
export const MAX_PARALLEL_REQUESTS = 3;

/**
 * The most bytes of answer read from a request process (its JSON line): a body at its 5 MiB
 * cap is 6.7 MiB as base64, an extracted page or a PDF's text at most 500,000 characters.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** The most bytes of a request process's stderr kept (only its first lines are shown). */
const MAX_STDERR_BYTES = 64 * 1024;

/**
 * The argv of the request process: network only, its memory capped by `sh`'s `ulimit -d` and
 * its CPU time by `ulimit -t` (`cpuSeconds`) before it execs Deno (limits it cannot raise
 * again). The CPU limit ends a process whose tern is gone (SIGKILL leaves nobody to stop it)
 * while it parses a hostile page: the request's own deadline bounds the waiting, this the work.
 * tern's own deno.json (named, so a project's deno.json in the working directory is never read)
 * resolves unpdf from tern's node_modules and lockfile; `--cached-only` and `--no-remote` keep
 * it from downloading code.
 */
export function webRequestArgv(
  denoPath = Deno.execPath(),
  configPath: string | null = defaultConfigPath(),
  cpuSeconds = cpuSecondsFor(30_000 + KILL_MARGIN_MS),
): string[] {
  return [
    "/bin/sh",
    "-c",
    // Lower limits inherited stay (their errors are not shown); the shell is replaced by Deno.
    `ulimit -d ${REQUEST_MEMORY_MB * 1024} 2>/dev/null; ulimit -t ${cpuSeconds} 2>/dev/null; ` +
    'exec "$@"',
    "tern-web-request",
    ...entryArgv(
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
        // The guard refuses this machine's own addresses: it lists the interfaces' addresses.
        "--allow-sys=networkInterfaces",
        // getaddrinfo reads the resolver's configuration.
        "--allow-read=/etc/hosts,/etc/resolv.conf,/etc/nsswitch.conf,/etc/gai.conf",
      ],
      [],
      denoPath,
    ),
  ];
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
    notFollowed?: string;
    /** Base64; empty when `html`, `json` or `search` is set (what was read is all tern needs). */
    body: string;
    pdf?: PdfText;
    html?: HtmlText;
    json?: JsonText;
    search?: SearchText;
  }
  | { ok: false; kind: WebRequestError["kind"]; message: string };

/** Time the request process is given beyond the request's deadline (start-up, the answer). */
export const KILL_MARGIN_MS = 10_000;

/** The CPU seconds of a request process that tern stops after `limitMs`: never fewer. */
function cpuSecondsFor(limitMs: number): number {
  return Math.max(1, Math.ceil(limitMs / 1000));
}

/**
 * A transport that runs each request in its own network-only Deno process, killed when it
 * outlives the request's deadline (default 30,000 ms) by {@linkcode KILL_MARGIN_MS} or its
 * answer passes {@linkcode MAX_ANSWER_BYTES}. At most {@linkcode MAX_PARALLEL_REQUESTS} run at
 * once in this tern process, whichever transport started them; the deadline starts when one
 * runs.
 */
export function processTransport(
  denoPath?: string,
  killMarginMs = KILL_MARGIN_MS,
): WebTransport {
  return async (request) => {
    const free = await takeSlot(request);
    try {
      const limitMs = (request.timeoutMs ?? 30_000) + killMarginMs;
      const argv = webRequestArgv(denoPath, defaultConfigPath(), cpuSecondsFor(limitMs));
      return await runRequestProcess(request, argv, limitMs);
    } finally {
      free();
    }
  };
}

async function runRequestProcess(
  request: WebRequest,
  argv: string[],
  limitMs: number,
): Promise<WebResponse> {
  const [command, ...args] = argv;
  const overdue = AbortSignal.timeout(limitMs);
  const child = new Deno.Command(command, {
    args,
    clearEnv: true,
    // Deno's cache (the launcher's DENO_DIR), so the script is not compiled again each time.
    env: ownDenoEnv(),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: request.signal ? AbortSignal.any([request.signal, overdue]) : overdue,
  }).spawn();
  const { signal: _signal, ...sent } = request;
  const writer = child.stdin.getWriter();
  // A process that died at once is reported by its answer (none), not by this write.
  await writer.write(new TextEncoder().encode(JSON.stringify(sent))).catch(() => {});
  await writer.close().catch(() => {});
  const [stdout, stderr, status] = await Promise.all([
    readCapped(child.stdout, MAX_ANSWER_BYTES, () => child.kill("SIGKILL")),
    readCapped(child.stderr, MAX_STDERR_BYTES),
    child.status,
  ]);
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
  if (stdout.truncated) {
    throw new WebRequestError(
      `Cannot fetch "${request.url}": the request process's answer passed ` +
        `${MAX_ANSWER_BYTES / 1024 / 1024} MiB and was stopped`,
      "limit",
    );
  }
  const line = new TextDecoder().decode(stdout.bytes).trim().split("\n").at(-1) ?? "";
  let answer: WebAnswer;
  try {
    answer = JSON.parse(line);
  } catch {
    const said = new TextDecoder().decode(stderr.bytes);
    if (OUT_OF_MEMORY.test(said)) {
      throw new WebRequestError(
        `Cannot fetch "${request.url}": reading the answer took more than the request ` +
          `process's ${REQUEST_MEMORY_MB} MiB of memory (a PDF or page that expands too much), ` +
          "so it was stopped",
        "limit",
      );
    }
    const detail = said.trim().split("\n").slice(-3).join(" ");
    const how = status.signal === null ? `exit ${status.code}` : `killed by ${status.signal}`;
    throw new WebRequestError(
      `Cannot fetch "${request.url}": the request process failed (${how}): ${detail}`,
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
    ...(answer.notFollowed === undefined ? {} : { notFollowed: answer.notFollowed }),
    body: new Uint8Array(Buffer.from(answer.body, "base64")),
    ...(answer.pdf ? { pdf: answer.pdf } : {}),
    ...(answer.html ? { html: answer.html } : {}),
    ...(answer.json ? { json: answer.json } : {}),
    ...(answer.search ? { search: answer.search } : {}),
  };
}

/** What V8 or Deno's allocator prints when the memory cap stops an allocation. */
const OUT_OF_MEMORY = /out of memory|memory allocation of \d+ bytes failed/i;

let running = 0;
const waiting: (() => void)[] = [];

/**
 * Waits for one of the {@linkcode MAX_PARALLEL_REQUESTS} slots; returns what frees it.
 * @throws {WebRequestError} when `request.signal` aborts while it waits.
 */
function takeSlot(request: WebRequest): Promise<() => void> {
  const { signal } = request;
  return new Promise((resolve, reject) => {
    const grant = () => {
      signal?.removeEventListener("abort", cancel);
      running++;
      let freed = false;
      resolve(() => {
        if (freed) return;
        freed = true;
        running--;
        waiting.shift()?.();
      });
    };
    const cancel = () => {
      const at = waiting.indexOf(grant);
      if (at !== -1) waiting.splice(at, 1);
      reject(new WebRequestError(`Fetching "${request.url}" was cancelled`, "limit"));
    };
    if (signal?.aborted) cancel();
    else if (running < MAX_PARALLEL_REQUESTS) grant();
    else {
      waiting.push(grant);
      signal?.addEventListener("abort", cancel, { once: true });
    }
  });
}
