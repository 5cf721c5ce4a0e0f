/**
 * The path a `file:` URL names, without `node:url`: its first import loads much of Deno's Node
 * compatibility layer (its errors, `util.inspect`, buffers), milliseconds of CPU that a first
 * bash round paid. No imports: code that runs without tern's import map (the restore process,
 * the tool worker's entry) uses it too.
 */

/**
 * The path a `file:` URL names, as `node:url`'s `fileURLToPath()` gives it on Linux and macOS.
 * @throws {TypeError} for a URL of another scheme, with a host, or with an encoded `/`.
 */
export function fileUrlToPath(url: URL | string): string {
  const parsed = typeof url === "string" ? new URL(url) : url;
  const fail = (why: string) =>
    new TypeError(`Cannot take the path of the URL "${parsed.href}": ${why}`);
  if (parsed.protocol !== "file:") throw fail("it is not a file: URL");
  if (parsed.hostname !== "") throw fail(`it names the host "${parsed.hostname}"`);
  if (/%2f/i.test(parsed.pathname)) throw fail('its path holds an encoded "/"');
  return decodeURIComponent(parsed.pathname);
}

/**
 * The `file:` URL of the absolute path `path`, as `node:url`'s `pathToFileURL()` gives it on
 * Linux and macOS. `%`, a backslash, tabs, line breaks and the characters node:url also escapes
 * are escaped first: the URL's own escaping would read `%41` as `A` and a backslash as a `/`,
 * and drop tabs and line breaks.
 * @throws {TypeError} for a relative path.
 */
export function pathToFileUrl(path: string): URL {
  if (!path.startsWith("/")) {
    throw new TypeError(`Cannot make a file: URL of "${path}": the path is not absolute`);
  }
  const url = new URL("file:///");
  url.pathname = path.replace(/[%\\\t\n\r[\]^|]/g, (char) => ESCAPES[char]);
  return url;
}

const ESCAPES: Record<string, string> = {
  "%": "%25",
  "\\": "%5C",
  "\t": "%09",
  "\n": "%0A",
  "\r": "%0D",
  "[": "%5B",
  "]": "%5D",
  "^": "%5E",
  "|": "%7C",
};
