import { equal } from "node:assert/strict";
import { shownUrl } from "../../src/core/url_text.ts";

Deno.test("shownUrl() hides a URL's user name and password", () => {
  equal(shownUrl("http://u:Pa55word@127.0.0.1:9/v1"), "http://***@127.0.0.1:9/v1");
  equal(shownUrl("https://token@host.example/api"), "https://***@host.example/api");
});

Deno.test("shownUrl() hides every query value and a bare parameter, keeping the names", () => {
  equal(shownUrl("https://h/v1?api-key=abc&x=1"), "https://h/v1?api-key=***&x=***");
  equal(shownUrl("https://h/v1?key=s3cr3t"), "https://h/v1?key=***");
  equal(shownUrl("https://h/v1?TOKENVALUE"), "https://h/v1?***");
  equal(shownUrl("https://h/v1#access_token=t"), "https://h/v1#***");
});

Deno.test("shownUrl() returns a URL without credentials, or a text that is no URL, unchanged", () => {
  equal(shownUrl("https://api.openai.com/v1"), "https://api.openai.com/v1");
  equal(shownUrl("http://127.0.0.1:11434/v1/"), "http://127.0.0.1:11434/v1/");
  equal(shownUrl("not a url"), "not a url");
});

Deno.test("shownUrl() hides the credentials of a URL it cannot parse (a port out of range)", () => {
  equal(shownUrl("http://me:hunter2secretpw@127.0.0.1:99999/v1"), "http://***@127.0.0.1:99999/v1");
  equal(
    shownUrl("http://h:99999/v1?key=sk-abc&x=1#tok"),
    "http://h:99999/v1?key=***&x=***#***",
  );
  equal(shownUrl("http://[::1/v1"), "http://[::1/v1");
});
