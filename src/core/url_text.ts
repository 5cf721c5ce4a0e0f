/**
 * URLs as tern shows and keeps them. A base URL may carry credentials: a user name and password
 * (`http://user:secret@host/v1`, which `fetch` sends as Basic authentication), a key in the
 * query (`?api-key=…`, `?key=…`) or in the path (`https://host/v1/sk-…/`, a gateway's
 * `https://gw.example/<token>/openai`). Requests use the URL as given; what tern prints, and what
 * it writes to its own files (the models cache), is this text instead.
 */
import { tokenShaped } from "./token_shape.ts";

/** What stands for a hidden part. */
const HIDDEN = "***";

/** Shortest piece of a path segment that counts as a key by its prefix alone (`sk-…`). */
const MIN_PREFIXED = 16;

/**
 * `url` without what may be a credential: the user name and password become one `***`, and so
 * do each query parameter's value (its name stays; a parameter without `=` is hidden whole), the
 * fragment, and each path segment that reads as a key (`sk-…`, or 24 or more letters and digits,
 * as written or percent-decoded). A text with none of them is returned as it is, and so is one
 * that is no URL but for what reads as those parts (`http://me:pw@host:99999/v1`, a port out of
 * range, still hides its password: it is shown in the error that refuses it). Never throws.
 */
export function shownUrl(url: string): string {
  const [origin, path, rest] = splitUrl(withoutUserOrQuery(url));
  return origin + path.split("/").map((part) => secretSegment(part) ? HIDDEN : part).join("/") +
    rest;
}

/**
 * The parts of `url` that `shownUrl` hides, as written and decoded: for a masker that must find
 * them in other text (an error that quotes the URL, or a server's answer that echoes its path).
 * Never throws.
 */
export function urlSecrets(url: string): string[] {
  const found: string[] = [];
  const [, path] = splitUrl(url);
  for (const part of path.split("/")) {
    if (secretSegment(part)) found.push(part, decoded(part));
  }
  if (URL.canParse(url)) {
    const { username, password, searchParams } = new URL(url);
    found.push(username, password, decoded(username), decoded(password));
    for (const [, value] of searchParams) found.push(value);
  }
  return [...new Set(found.filter((part) => part !== ""))];
}

/** `url` as scheme and authority, path, and what follows the path (query and fragment). */
function splitUrl(url: string): [string, string, string] {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*)?([^?#]*)([\s\S]*)$/.exec(url)!;
  return [match[1] ?? "", match[2], match[3]];
}

function secretSegment(segment: string): boolean {
  return [segment, decoded(segment)].some((text) =>
    (text.length >= MIN_PREFIXED && tokenShaped(text)) ||
    text.split(/[^A-Za-z0-9_.+=-]+/).some((piece) =>
      piece.length >= MIN_PREFIXED && tokenShaped(piece)
    )
  );
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `url` with its user name, password, query values and fragment hidden. */
function withoutUserOrQuery(url: string): string {
  if (!URL.canParse(url)) return shownText(url);
  const parsed = new URL(url);
  const { username, password, search, hash } = parsed;
  if (username === "" && password === "" && search === "" && hash === "") return url;
  const userinfo = username !== "" || password !== "" ? `${HIDDEN}@` : "";
  const query = search.slice(1).split("&").filter((part) => part !== "").map((part) =>
    part.includes("=") ? `${part.slice(0, part.indexOf("="))}=${HIDDEN}` : HIDDEN
  );
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}` +
    (query.length > 0 ? `?${query.join("&")}` : "") + (hash === "" ? "" : `#${HIDDEN}`);
}

/** What of `text` (no URL) reads as a URL's user part, query values or fragment, hidden. */
function shownText(text: string): string {
  return text
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#\s]*@/, `$1${HIDDEN}@`)
    .replace(/([?&][^=&#\s]*=)[^&#\s]*/g, `$1${HIDDEN}`)
    .replace(/#\S*/, `#${HIDDEN}`);
}

/**
 * The URL of `path` (`/chat/completions`, `/models?limit=1000`) under the API base URL
 * `baseUrl`: the path joins the base's path, before its query (`?api-version=…`, which some
 * servers want on every request), whose parameters the path's own query joins. A string
 * joined as it is put the path into the query (`…/v1?api-version=1/chat/completions`).
 * @throws {TypeError} for a base URL that cannot be parsed.
 */
export function apiUrl(baseUrl: string, path: string): string {
  const url = new URL(baseUrl);
  url.hash = "";
  const [pathname, query] = path.split("?", 2);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${pathname}`;
  for (const [name, value] of new URLSearchParams(query ?? "")) {
    url.searchParams.append(name, value);
  }
  return url.href;
}
