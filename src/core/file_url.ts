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
