import { equal, ok } from "node:assert/strict";
import { indentedJson, MAX_INDENTED_CHARS } from "../../src/core/indented_json.ts";

Deno.test("indentedJson() indents small values as JSON.stringify(value, null, 2) does", () => {
  const value = { a: [1, { b: "two", c: null }], d: {}, e: [], f: true };
  equal(indentedJson(value, "cut"), JSON.stringify(value, null, 2));
  equal(indentedJson(value, "compact", JSON.stringify(value)), JSON.stringify(value, null, 2));
});

Deno.test("indentedJson() keeps deep or huge values compact, or cut, never multiplied", () => {
  let deep: unknown = [];
  for (let i = 0; i < 4_500; i++) deep = [deep];
  equal(indentedJson(deep, "cut"), JSON.stringify(deep));
  // With the text it was parsed from, that text as it came.
  const sent = ` ${JSON.stringify(deep)} `;
  equal(indentedJson(deep, "cut", sent), sent);
  const wide = Array.from({ length: 300_000 }, (_, i) => ({ id: i }));
  equal(indentedJson(wide, "compact"), JSON.stringify(wide));
  const cut = indentedJson(wide, "cut");
  ok(cut.endsWith("\n[... the rest of the JSON is not shown]"));
  ok(cut.length < MAX_INDENTED_CHARS + 100);
});
