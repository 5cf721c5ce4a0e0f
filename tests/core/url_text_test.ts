import { equal } from "node:assert/strict";
import { apiUrl, shownUrl } from "../../src/core/url_text.ts";

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

Deno.test("apiUrl() joins the API's path before the base URL's query, and the path's query to it", () => {
  equal(apiUrl("https://h/v1", "/chat/completions"), "https://h/v1/chat/completions");
  equal(apiUrl("https://h/v1/", "/models"), "https://h/v1/models");
  // Joined as strings, the path went into the query: `…/v1?api-version=1/chat/completions`.
  equal(
    apiUrl("https://h/openai/v1?api-version=2025-01-01", "/chat/completions"),
    "https://h/openai/v1/chat/completions?api-version=2025-01-01",
  );
  equal(
    apiUrl("http://u:p@h:8080/v1?key=k", "/models?limit=1000"),
    "http://u:p@h:8080/v1/models?key=k&limit=1000",
  );
  equal(apiUrl("https://h/v1#frag", "/responses"), "https://h/v1/responses");
});
