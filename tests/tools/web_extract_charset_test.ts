/**
 * decodeBody() and htmlOfAnswer() read a page in the encoding a browser would: its byte order
 * mark, its header's charset, then its `<meta>` charset, so the model reads what the person sees.
 */
import { equal, ok } from "node:assert/strict";
import { decodeBody, htmlOfAnswer } from "../../src/tools/web_extract.ts";

/** `text` as bytes, one byte per character (all below U+0100). */
function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

const FILLER = "The cafe serves coffee and tea every morning. ".repeat(12);

Deno.test("htmlOfAnswer() reads a page in the charset its <meta> names when the header names none", async () => {
  const page = latin1(
    '<!doctype html><html><head><meta charset="windows-1252"><title>Caf\xe9</title></head>' +
      `<body><article><p>${FILLER}</p><p>Men\xfc of the caf\xe9</p></article></body></html>`,
  );
  const read = await htmlOfAnswer({ html: { format: "text" } }, {
    url: "https://example.com/",
    contentType: "text/html",
    body: page,
  });
  ok(read?.ok, JSON.stringify(read));
  equal(read.title, "Café");
  ok(read.content.includes("Menü of the café"), read.content);
});

Deno.test("decodeBody() shows the model the ISO-2022-JP text a browser shows, not its escape bytes", () => {
  const page = latin1(
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-2022-JP">' +
      "</head><body><p>\x1b$BF|K\\\x1b(B</p></body></html>",
  );
  const text = decodeBody(page, "text/html");
  ok(text.includes("<p>日本</p>"), text);
  ok(!text.includes("F|K"), text);
});

Deno.test("decodeBody() prefers the header's charset and the byte order mark to a <meta>", () => {
  const page = latin1(
    '<html><head><meta charset="windows-1252"></head><body>\xc3\xa9</body></html>',
  );
  ok(decodeBody(page, "text/html; charset=utf-8").includes("<body>é</body>"));
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...page]);
  ok(decodeBody(bom, "text/html").includes("<body>é</body>"));
  // A <meta> naming UTF-16 was found by reading the bytes as ASCII: a browser reads UTF-8.
  const sixteen = latin1(
    '<html><head><meta charset="utf-16le"></head><body>\xc3\xa9</body></html>',
  );
  ok(decodeBody(sixteen, "text/html").includes("<body>é</body>"));
  // Not HTML: a <meta> in plain text names nothing.
  equal(decodeBody(page, "text/plain"), new TextDecoder().decode(page));
});
