/**
 * HTML → what the model reads: the page is parsed with linkedom (no browser, no scripts run),
 * cleaned (scripts, styles, comments, navigation, footers, forms and hidden nodes dropped;
 * links and images made absolute, `javascript:` links unlinked), its article picked by
 * Mozilla's Readability, and turned into Markdown by turndown with GFM tables. The libraries
 * load on the first page, never at start-up. A JSON answer is indented here too
 * (`jsonOfAnswer`).
 *
 * The libraries' own types need the DOM lib, which the project does not use; the few members
 * used here are typed by the small shims below instead.
 */

import { indentedJson } from "../core/indented_json.ts";
import type { HtmlText, JsonText } from "./web_request.ts";

/** The DOM members this file uses. */
interface DomNode {
  nodeType: number;
  textContent: string | null;
  remove(): void;
}
interface DomElement extends DomNode {
  tagName: string;
  innerHTML: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  hasAttribute(name: string): boolean;
  remove(): void;
  querySelectorAll(selector: string): Iterable<DomElement>;
  attributes: Iterable<{ name: string; value: string }>;
  replaceWith(...nodes: (DomNode | string)[]): void;
}
interface DomDocument extends DomElement {
  documentElement: DomElement | null;
  body: DomElement | null;
  title: string;
  querySelector(selector: string): DomElement | null;
  createTreeWalker(root: DomNode, whatToShow: number): { nextNode(): DomNode | null };
}

/** `NodeFilter.SHOW_COMMENT`: a tree walker over comment nodes only. */
const NODE_FILTER_SHOW_COMMENT = 0x80;
interface ReadabilityModule {
  Readability: new (
    document: DomDocument,
    options?: { charThreshold?: number; keepClasses?: boolean },
  ) => {
    parse(): { title?: string | null; content?: string | null } | null;
  };
}
interface LinkedomModule {
  parseHTML(html: string): { document: DomDocument };
}
interface TurndownService {
  use(plugin: unknown): TurndownService;
  remove(filter: string | string[]): TurndownService;
  addRule(name: string, rule: {
    filter: (node: TurndownNode) => boolean;
    replacement: (content: string, node: TurndownNode) => string;
  }): TurndownService;
  turndown(html: string): string;
}
/** A node as turndown's rules see it (its own DOM). */
interface TurndownNode {
  nodeName: string;
  textContent: string | null;
  getElementsByTagName(name: string): { length: number };
}
interface TurndownModule {
  default: new (options: Record<string, string>) => TurndownService;
}
interface GfmModule {
  gfm: unknown;
}

/** What {@linkcode extractHtml} returns. */
export interface Extracted {
  title: string;
  /** The article as Markdown, plain text or cleaned HTML, per the format asked for. */
  content: string;
}

/** Elements dropped before anything else looks at the page. */
const DROPPED = [
  "script",
  "style",
  "noscript",
  "noembed",
  "noframes",
  "datalist",
  "rp",
  "template",
  "iframe",
  "object",
  "embed",
  "canvas",
  "svg",
  "nav",
  "footer",
  "aside",
  "form",
  "button",
  "select",
  "input",
  "textarea",
  "dialog",
  "link",
  "meta",
  "[hidden]",
  '[aria-hidden="true"]',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
].join(",");

/**
 * Whether a `style` attribute hides its element: `display: none`, `visibility: hidden` or
 * `collapse`, or `content-visibility: hidden` (its content is never drawn), read as a browser reads it: comments dropped, escapes decoded, property names in
 * any case, and the last declaration of a property winning (an `!important` one over later
 * plain ones). Text hidden by a style with a comment after `none`, an escape (`dis\play`) or
 * `collapse` reached the model whole.
 */
export function hidesElement(style: string): boolean {
  const text = style.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, " ")
    .replace(/\\([0-9a-fA-F]{1,6})[ \t\n\r\f]?/g, (_, hex: string) => codePoint(hex))
    .replace(/\\([\s\S])/g, "$1");
  const declared = new Map<string, { value: string; important: boolean }>();
  for (const declaration of text.split(";")) {
    const colon = declaration.indexOf(":");
    if (colon === -1) continue;
    const name = declaration.slice(0, colon).trim().toLowerCase();
    const raw = declaration.slice(colon + 1).trim().toLowerCase();
    const important = /!\s*important$/.test(raw);
    if (declared.get(name)?.important && !important) continue;
    declared.set(name, { value: raw.replace(/!\s*important$/, "").trim(), important });
  }
  const visibility = declared.get("visibility")?.value;
  return declared.get("display")?.value === "none" || visibility === "hidden" ||
    visibility === "collapse" || declared.get("content-visibility")?.value === "hidden";
}

/** The character a CSS escape's hex digits name; U+FFFD for none (as CSS reads it). */
function codePoint(hex: string): string {
  const code = Number.parseInt(hex, 16);
  return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)
    ? "\ufffd"
    : String.fromCodePoint(code);
}

let libraries: Promise<[LinkedomModule, ReadabilityModule, TurndownModule, GfmModule]> | undefined;

function loadLibraries() {
  libraries ??= Promise.all([
    import("linkedom") as Promise<unknown> as Promise<LinkedomModule>,
    import("@mozilla/readability") as Promise<unknown> as Promise<ReadabilityModule>,
    import("turndown") as Promise<unknown> as Promise<TurndownModule>,
    import("turndown-plugin-gfm") as Promise<unknown> as Promise<GfmModule>,
  ]);
  return libraries;
}

/**
 * The readable content of `html` fetched from `options.url`, as `options.format` (default
 * Markdown). Falls back to the whole cleaned body when Readability finds no article.
 */
export async function extractHtml(
  html: string,
  options: { url: string; format?: "markdown" | "text" | "html" },
): Promise<Extracted> {
  const { url, format = "markdown" } = options;
  const [{ parseHTML }, { Readability }, turndownModule, { gfm }] = await loadLibraries();
  // A fragment or bare text served as HTML (`<p>…</p>`) parses to no <html> and no <body>:
  // read it as a page's body.
  let { document } = parseHTML(html);
  if (document.documentElement?.tagName.toUpperCase() !== "HTML") {
    document = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`).document;
  }
  const title = (document.title ?? "").trim();
  clean(document, baseOf(document, url));
  const bodyHtml = document.body?.innerHTML ?? "";
  let article: string | undefined;
  try {
    const parsed = new Readability(document, { charThreshold: 200, keepClasses: true }).parse();
    if (parsed?.content && parsed.content.trim() !== "") article = parsed.content;
  } catch {
    // A page Readability cannot handle is still read whole.
  }
  const contentHtml = article ?? bodyHtml;
  if (format === "html") return { title, content: contentHtml.trim() };
  if (format === "text") {
    const { document: again } = parseHTML(`<html><body>${contentHtml}</body></html>`);
    return { title, content: tidyText(again.body?.textContent ?? "") };
  }
  const service = new turndownModule.default({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
  });
  service.use(gfm);
  service.addRule("bare-pre", {
    // A <pre> without <code> is still code.
    filter: (node) => node.nodeName === "PRE" && node.getElementsByTagName("code").length === 0,
    replacement: (_content, node) => `\n\n\`\`\`\n${node.textContent ?? ""}\n\`\`\`\n\n`,
  });
  return { title, content: tidyMarkdown(service.turndown(contentHtml)) };
}

function baseOf(document: DomDocument, url: string): string {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return url;
  try {
    const base = new URL(href, url);
    return base.protocol === "http:" || base.protocol === "https:" ? base.href : url;
  } catch {
    return url;
  }
}

/**
 * Characters the absolute links and image addresses of one page may take together: made
 * absolute against a long `<base href>` the page chose, short links grew a 305 KB page 130-fold.
 * Links past it lose their address (their text stays), images past it are dropped.
 */
const MAX_LINK_CHARS = 1_000_000;

/** Drops what is not content and makes every link absolute. */
function clean(document: DomDocument, base: string): void {
  lowerAttributeNames(document);
  for (const element of [...document.querySelectorAll(DROPPED)]) element.remove();
  for (const element of [...document.querySelectorAll("[style]")]) {
    if (hidesElement(element.getAttribute("style") ?? "")) element.remove();
  }
  // Comments show nowhere on the page; the "html" format kept them.
  const comments = document.createTreeWalker(document, NODE_FILTER_SHOW_COMMENT);
  const found: DomNode[] = [];
  for (let node = comments.nextNode(); node !== null; node = comments.nextNode()) found.push(node);
  for (const comment of found) comment.remove();
  let left = MAX_LINK_CHARS;
  const absolute = (href: string) => {
    const url = absoluteUrl(href, base);
    if (url === undefined || url.length > left) return undefined;
    left -= url.length;
    return url;
  };
  for (const link of document.querySelectorAll("a[href]")) {
    const url = absolute(link.getAttribute("href") ?? "");
    if (url === undefined) link.removeAttribute("href");
    else link.setAttribute("href", url);
  }
  for (const image of document.querySelectorAll("img")) {
    const url = absolute(image.getAttribute("src") ?? "");
    if (url === undefined) image.remove();
    else image.setAttribute("src", url);
  }
}

/** The attributes whose name decides what is dropped and which address a link keeps. */
const DECIDING_ATTRIBUTES = new Set(["hidden", "style", "aria-hidden", "role", "href", "src"]);

/**
 * Names the {@linkcode DECIDING_ATTRIBUTES} in lower case, as a browser's HTML parser names every
 * attribute, the first of two spellings winning: linkedom keeps `<p HIDDEN>` and
 * `STYLE="display:none"` as written, which the selectors and `getAttribute()` above do not
 * match, so such text reached the model. Only those: each removal costs linkedom a pass over
 * the element's attributes, and a page can give one element many thousands.
 */
function lowerAttributeNames(document: DomDocument): void {
  for (const element of document.querySelectorAll("*")) {
    const attributes = [...element.attributes];
    const renamed = attributes.filter(({ name }) =>
      name !== name.toLowerCase() && DECIDING_ATTRIBUTES.has(name.toLowerCase())
    );
    if (renamed.length === 0) continue;
    const first = new Map<string, string>();
    for (const { name, value } of attributes) {
      const lower = name.toLowerCase();
      if (DECIDING_ATTRIBUTES.has(lower) && !first.has(lower)) first.set(lower, value);
    }
    for (const { name } of renamed) element.removeAttribute(name);
    for (const { name } of renamed) {
      const lower = name.toLowerCase();
      element.setAttribute(lower, first.get(lower)!);
    }
  }
}

/** `href` resolved against `base`; undefined for anything but http(s), mailto and fragments. */
function absoluteUrl(href: string, base: string): string | undefined {
  try {
    const url = new URL(href.trim(), base);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function tidyText(text: string): string {
  return text.split("\n").map((line) => line.replace(/[ \t\u00a0]+/g, " ").trim())
    .join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function tidyMarkdown(markdown: string): string {
  return markdown.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
}

/** Whether an answer is an HTML page, by its content type or, with none, its first bytes. */
export function isHtmlAnswer(contentType: string, body: Uint8Array): boolean {
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "text/html" || type === "application/xhtml+xml" ||
    (type === "" && /^\s*(?:<!doctype html|<html)/i.test(decodeBody(body.subarray(0, 512))));
}

/**
 * The body as text: in the encoding its byte order mark names (UTF-8, UTF-16 LE or BE), as a
 * browser reads it whatever the header says; else in its declared charset; else, for an HTML
 * page, in the one its `<meta>` names within its first 1,024 bytes (as a browser's prescan
 * does); else UTF-8 (also for an unknown name). An ISO-2022-JP page declared only by its
 * `<meta>` showed the person Japanese text while the model read the escaped ASCII bytes.
 */
export function decodeBody(bytes: Uint8Array, contentType = ""): string {
  const charset = bomCharset(bytes) ?? /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1] ??
    metaCharset(bytes, contentType);
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

/**
 * The charset an HTML page's `<meta charset>` or `<meta http-equiv ... charset=>` names in its
 * first 1,024 bytes, read as a browser does: UTF-16 there means UTF-8 (the bytes were read as
 * ASCII to find it), `x-user-defined` means windows-1252. Undefined when the answer is not
 * HTML by its type (or, with no type, its first bytes) or names none.
 */
function metaCharset(bytes: Uint8Array, contentType: string): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  const type = contentType.split(";")[0].trim().toLowerCase();
  const html = type === "text/html" || type === "application/xhtml+xml" ||
    (type === "" && /^\s*(?:<!doctype html|<html)/i.test(head));
  if (!html) return undefined;
  const named = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1]?.toLowerCase();
  if (named === undefined) return undefined;
  if (named.startsWith("utf-16")) return "utf-8";
  return named === "x-user-defined" ? "windows-1252" : named;
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

/** Characters of a page's content the request process sends at most (web_fetch cuts further). */
export const HTML_MAX_CHARS = 500_000;

/**
 * The page of an answer extracted for `request.html`, its content cut at
 * {@linkcode HTML_MAX_CHARS}, or nothing when it asks for none, the answer is not HTML, or it
 * is binary (the caller says why). Run by the request process.
 */
export async function htmlOfAnswer(
  request: { html?: { format: "markdown" | "text" | "html" } },
  response: { url: string; contentType: string; body: Uint8Array },
): Promise<HtmlText | undefined> {
  if (request.html === undefined) return undefined;
  if (!isHtmlAnswer(response.contentType, response.body)) return undefined;
  const body = decodeBody(response.body, response.contentType);
  if (body.includes("\0")) return undefined;
  try {
    const { title, content } = await extractHtml(body, {
      url: response.url,
      format: request.html.format,
    });
    return {
      ok: true,
      title: title.slice(0, HTML_MAX_CHARS),
      content: content.slice(0, HTML_MAX_CHARS),
      length: content.length,
      bytes: response.body.length,
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** Whether an answer is JSON, by its content type. */
export function isJsonAnswer(contentType: string): boolean {
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/**
 * A JSON answer as the model reads it for `request.json`: indented (`indentedJson`), or as it
 * came when it is not valid JSON, cut at {@linkcode HTML_MAX_CHARS}; nothing when it asks for
 * none, the answer is not JSON, or it is binary (the caller says why). Run by the request
 * process: parsing and indenting 5 MiB of JSON took 6 s, which in tern's process held its
 * event loop.
 */
export function jsonOfAnswer(
  request: { json?: boolean },
  response: { contentType: string; body: Uint8Array },
): JsonText | undefined {
  if (!request.json || !isJsonAnswer(response.contentType)) return undefined;
  const body = decodeBody(response.body, response.contentType);
  if (body.includes("\0")) return undefined;
  let content = body;
  let valid = true;
  try {
    content = indentedJson(JSON.parse(body), "cut", body);
  } catch {
    valid = false;
  }
  return {
    valid,
    content: content.slice(0, HTML_MAX_CHARS),
    length: content.length,
    bytes: response.body.length,
  };
}
