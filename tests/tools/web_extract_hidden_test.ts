/**
 * extractHtml() against pages that hide text from the person but not from a parser: attribute
 * names in any case (HTML reads them in lower case) and elements no browser draws.
 */
import { equal, ok } from "node:assert/strict";
import { extractHtml, hidesElement } from "../../src/tools/web_extract.ts";

const HIDDEN = [
  "<p HIDDEN>HIDDEN-UPPER-ATTRIBUTE</p>",
  "<p Hidden='until-found'>HIDDEN-MIXED-ATTRIBUTE</p>",
  '<div STYLE="display:none">HIDDEN-UPPER-STYLE</div>',
  '<div Style="visibility:hidden">HIDDEN-MIXED-STYLE</div>',
  '<div STYLE="display:none" style="color:red">HIDDEN-FIRST-SPELLING-WINS</div>',
  '<div ARIA-HIDDEN="true">HIDDEN-UPPER-ARIA</div>',
  "<noembed>HIDDEN-NOEMBED</noembed>",
  "<noframes>HIDDEN-NOFRAMES</noframes>",
  "<datalist><option>HIDDEN-DATALIST</option></datalist>",
  "<ruby>kan<rp>HIDDEN-RP</rp><rt>ji</rt></ruby>",
  '<div style="content-visibility: hidden">HIDDEN-CONTENT-VISIBILITY</div>',
  '<div style="Content-Visibility:HIDDEN !important">HIDDEN-CONTENT-VISIBILITY-UPPER</div>',
];

const SHOWN = [
  '<div style="color:red" STYLE="display:none">SHOWN-FIRST-SPELLING-WINS</div>',
  '<div Class="note">SHOWN-MIXED-CLASS</div>',
  '<div style="content-visibility: auto">SHOWN-CONTENT-VISIBILITY-AUTO</div>',
];

const PAGE = "<!doctype html><html><head><title>Notes</title></head><body><article>" +
  `<h1>Release notes</h1><p>${"The release fixes the parser and the cache. ".repeat(20)}</p>` +
  HIDDEN.join("\n") + SHOWN.join("\n") +
  `<p>${"Upgrade when convenient. ".repeat(20)}</p></article></body></html>`;

Deno.test("extractHtml() drops hidden text whatever the case of its attribute names", async () => {
  for (const format of ["markdown", "text", "html"] as const) {
    const { content } = await extractHtml(PAGE, { url: "https://example.com/", format });
    ok(content.includes("The release fixes the parser"), content);
    const leaked = [...content.matchAll(/HIDDEN-[A-Z-]+/g)].map((found) => found[0]);
    equal(leaked.join(" "), "", `${format}: hidden text reached the model`);
    for (const shown of SHOWN.map((html) => /SHOWN-[A-Z-]+/.exec(html)![0])) {
      ok(content.includes(shown), `${format}: ${shown} is drawn, so it stays`);
    }
  }
});

Deno.test("extractHtml() drops a javascript: link written with an upper-case HREF", async () => {
  const page = `<html><body><article><p>${"Plain words about gardens. ".repeat(20)}</p>` +
    '<p><a HREF="javascript:alert(1)">Click</a> <a HREF="/docs">Docs</a></p></article></body></html>';
  const { content } = await extractHtml(page, { url: "https://example.com/", format: "html" });
  ok(!/javascript:/i.test(content), content);
  ok(content.includes('href="https://example.com/docs"'), content);
});

Deno.test("hidesElement() reads content-visibility: hidden as hiding, auto and visible as not", () => {
  ok(hidesElement("content-visibility: hidden"));
  ok(hidesElement("content-visibility:hidden/**/; color: red"));
  ok(!hidesElement("content-visibility: auto"));
  ok(!hidesElement("content-visibility: hidden; content-visibility: visible"));
});
