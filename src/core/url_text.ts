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
 * the fragment. A text with none of them, or that is no URL, is returned as it is. Never throws.
 */
export function shownUrl(url: string): string {
  if (!URL.canParse(url)) return url;
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
