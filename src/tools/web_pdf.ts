/**
 * PDFs as text for web_fetch, with unpdf (pdf.js). Parsing a hostile PDF cannot be bounded
 * in time from inside the same process, so this runs only in the request process
 * (`web_request_main.ts`, killed by tern when it outlives its deadline); unpdf is imported
 * on the first PDF, never at tern's start-up. Pages are read one at a time up to a page and a
 * character cap and the exchange's deadline; the text carries a marker per page.
 */
import {
  guardedRequest,
  type GuardOptions,
  type WebRequest,
  WebRequestError,
  type WebResponse,
} from "./web_request.ts";

/** How much of a PDF is read: pages (default 50) and characters (default 200,000) at most. */
export type PdfLimits = NonNullable<WebRequest["pdf"]>;

const DEFAULT_MAX_PAGES = 50;
const DEFAULT_MAX_CHARS = 200_000;

/** Whether a response is a PDF, by its type or its first bytes. */
export function isPdf(contentType: string, body: Uint8Array): boolean {
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/pdf" ||
    [..."%PDF-"].every((char, i) => body[i] === char.charCodeAt(0));
}

/**
 * The text of a PDF, page by page (`--- Page 2 of 9 ---` before each), stopping at the caps
 * or when `signal` aborts.
 * @throws {Error} when the PDF cannot be parsed (pdf.js's message).
 */
export async function pdfToText(
  bytes: Uint8Array,
  limits: PdfLimits = {},
  signal?: AbortSignal,
): Promise<{ text: string; pages: number; read: number; cut: string | undefined }> {
  const maxPages = limits.maxPages ?? DEFAULT_MAX_PAGES;
  const maxChars = limits.maxChars ?? DEFAULT_MAX_CHARS;
  const { getDocumentProxy } = await import("unpdf");
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(bytes.slice(), {
    // No fonts installed, no logging (the request process's stdout carries the answer). This
    // pdf.js build has no eval-based font path at all.
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  try {
    const pages = pdf.numPages;
    const parts: string[] = [];
    let chars = 0;
    let cut: string | undefined;
    let read = 0;
    for (let number = 1; number <= pages; number++) {
      if (number > maxPages) {
        cut = `the first ${maxPages} of ${pages} pages`;
        break;
      }
      if (signal?.aborted) {
        cut = `the first ${read} of ${pages} pages (the time limit was reached)`;
        break;
      }
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      const text = content.items
        .map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : ""))
        .join("")
        .trim();
      page.cleanup();
      const part = `--- Page ${number} of ${pages} ---\n${text}`;
      read = number;
      if (chars + part.length > maxChars) {
        parts.push(part.slice(0, Math.max(0, maxChars - chars)));
        cut = `${maxChars} characters (within page ${number} of ${pages})`;
        break;
      }
      parts.push(part);
      chars += part.length + 2;
    }
    return { text: parts.join("\n\n"), pages, read, cut };
  } finally {
    await pdf.cleanup();
  }
}

/**
 * {@linkcode guardedRequest}, then, when `request.pdf` is set and the answer is a PDF, its
 * text in place of the body (`pdf` says how much was read, or why it could not be). What the
 * request process does; tests call it with their guard relaxation.
 */
export async function requestWithPdf(
  request: WebRequest,
  guard: GuardOptions = {},
): Promise<WebResponse> {
  const started = Date.now();
  const response = await guardedRequest(request, guard);
  if (request.pdf === undefined || !isPdf(response.contentType, response.body)) return response;
  const bytes = response.body.length;
  const left = (request.timeoutMs ?? 30_000) - (Date.now() - started);
  if (left <= 0) {
    throw new WebRequestError(
      // The URL asked for: after a redirect, `response.url` is the server's words.
      `Cannot read the PDF "${request.url}": no time was left within the deadline`,
      "limit",
    );
  }
  // Pages stop being read a little before the deadline, so what was read comes back; a page
  // that is still being read at the deadline itself ends the reading with an error.
  const lastPage = AbortSignal.timeout(Math.floor(left * 0.9));
  const deadline = AbortSignal.timeout(left);
  try {
    const { text, pages, read, cut } = await untilAborted(
      pdfToText(response.body, request.pdf, lastPage),
      deadline,
      `no text within the ${request.timeoutMs ?? 30_000} ms deadline`,
    );
    return {
      ...response,
      body: new TextEncoder().encode(text),
      pdf: { ok: true, pages, read, bytes, cut },
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ...response, body: new Uint8Array(), pdf: { ok: false, bytes, message: detail } };
  }
}

/** `promise`, or a rejection naming `why` once `signal` aborts (the work itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, why: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error(why));
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
