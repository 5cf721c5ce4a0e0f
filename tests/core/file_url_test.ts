/** src/core/file_url.ts: node:url's fileURLToPath() without node:url. */
import { equal, throws } from "node:assert/strict";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fileUrlToPath, pathToFileUrl } from "../../src/core/file_url.ts";

Deno.test("fileUrlToPath() gives what node:url's fileURLToPath() gives for file: URLs", () => {
  const urls = [
    "file:///",
    "file:///work/tern/deno.json",
    "file:///a%20b/c%25d/%C3%A9t%C3%A9.ts",
    "file:///a/b/../c/./d",
    "file:///a?query#hash",
    "file://localhost/etc/hosts",
    "file:///%E2%9C%93/x%3Fy%23z",
  ];
  for (const url of urls) {
    equal(fileUrlToPath(url), fileURLToPath(url), url);
    equal(fileUrlToPath(new URL(url)), fileURLToPath(new URL(url)), url);
  }
});

Deno.test("fileUrlToPath() refuses what node:url refuses: another scheme, a host, an encoded /", () => {
  for (
    const url of [
      "https://example.com/a",
      "file://server/share/a",
      "file:///a%2Fb",
      "file:///a%2fb",
    ]
  ) {
    throws(() => fileURLToPath(url), TypeError, url);
    throws(() => fileUrlToPath(url), /^TypeError: Cannot take the path of the URL/, url);
  }
});

Deno.test("pathToFileUrl() gives what node:url's pathToFileURL() gives, and round-trips", () => {
  const paths = [
    "/",
    "/work/tern/dist/tern.js",
    "/a b/c%41d/été.ts",
    "/x?y#z",
    "/tab\there/line\nbreak\rreturn",
    '/✓/[brackets]/{braces}/`tick`/"quote"/<lt>/^caret/|pipe/back\\slash/ sp',
  ];
  for (const path of paths) {
    equal(pathToFileUrl(path).href, pathToFileURL(path).href, path);
    equal(fileUrlToPath(pathToFileUrl(path)), path, path);
  }
  throws(() => pathToFileUrl("relative/x.ts"), /^TypeError: Cannot make a file: URL of/);
});
