/**
 * URLs as tern shows and keeps them. A base URL may carry credentials: a user name and password
 * (`http://user:secret@host/v1`, which `fetch` sends as Basic authentication) or a key in the
 * query (`?api-key=…`, `?key=…`). Requests use the URL as given; what tern prints, and what it
 * writes to its own files (the models cache), is this text instead.
 */

/** What stands for a hidden part. */
const HIDDEN = "***";

/**
 * `url` without what may be a credential: the user name and password become one `***`, and so
 * do each query parameter's value (its name stays; a parameter without `=` is hidden whole) and
 * the fragment. A text with none of them is returned as it is, and so is one that is no URL but
 * for what reads as those parts (`http://me:pw@host:99999/v1`, a port out of range, still hides
 * its password: it is shown in the error that refuses it). Never throws.
 */
export function shownUrl(url: string): string {
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
