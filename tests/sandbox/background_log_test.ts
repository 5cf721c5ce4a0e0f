import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { LOG_CHARS, LogRing } from "../../src/sandbox/background_log.ts";

Deno.test("LogRing keeps only its newest characters, whatever the pieces' sizes", () => {
  const ring = new LogRing(10);
  ring.append("line 1\nline 2\n");
  ring.append("x".repeat(25));
  ring.append("\nend\n");
  equal(ring.total, 14 + 25 + 5);
  equal(ring.dropped, ring.total - 10);
  deepEqual(ring.tail(5), ["xxxxx", "end"]);
});

Deno.test("LogRing.append() of a flood holds memory to its limit", () => {
  const ring = new LogRing(1000);
  for (let i = 0; i < 10_000; i++) ring.append(`${"y".repeat(99)}\n`);
  equal(ring.total, 1_000_000);
  equal(ring.total - ring.dropped, 1000);
  equal(ring.tail(1000).length, 10);
});

Deno.test("LogRing.tail() counts a last line without its newline", () => {
  const ring = new LogRing(100);
  ring.append("a\nb\nc");
  deepEqual(ring.tail(2), ["b", "c"]);
  deepEqual(ring.tail(9), ["a", "b", "c"]);
  deepEqual(new LogRing(5).tail(3), []);
});

Deno.test("LogRing.grep() matches plain text case-insensitively, never as a pattern", () => {
  const ring = new LogRing(1000);
  ring.append("GET /a 200\nget /b 404\n(a+)+$ literal\nPOST /c\n");
  deepEqual(ring.grep("get", 10), ["GET /a 200", "get /b 404"]);
  deepEqual(ring.grep("get", 1), ["get /b 404"]);
  deepEqual(ring.grep("(a+)+$", 10), ["(a+)+$ literal"]);
  deepEqual(ring.grep(".", 10), []);
});

Deno.test("LogRing() refuses a limit below one character", () => {
  throws(() => new LogRing(0), RangeError);
});

Deno.test("LogRing keeps the newest text exactly through many one-character pieces", () => {
  const ring = new LogRing(5000);
  let all = "";
  for (let i = 0; i < 50_000; i++) {
    const piece = i % 100 === 99 ? "\n" : String(i % 10);
    ring.append(piece);
    all += piece;
  }
  equal(ring.total, 50_000);
  const kept = all.slice(-5000).split("\n");
  if (kept.at(-1) === "") kept.pop();
  deepEqual(ring.tail(1000), kept);
});

Deno.test("LogRing.append() of a sustained stream references at most its limit plus one chunk", () => {
  const chunk = 64 * 1024;
  const ring = new LogRing();
  let most = 0;
  for (let i = 0; i < 2000; i++) {
    ring.append(`${String(i).padStart(6, "0")} ${"y".repeat(chunk - 8)}\n`);
    most = Math.max(most, ring.held);
  }
  equal(ring.total, 2000 * chunk);
  equal(ring.total - ring.dropped, LOG_CHARS);
  ok(most <= LOG_CHARS + chunk, `held ${most} characters`);
  equal(ring.tail(1)[0].slice(0, 7), "001999 ");
});

Deno.test("LogRing keeps the newest text exactly through pieces of mixed sizes", () => {
  const ring = new LogRing(1000);
  let all = "";
  let seed = 7;
  for (let i = 0; i < 3000; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const size = i % 50 === 0 ? 1000 + (seed % 1500) : 1 + (seed % 300);
    const piece = `${String(i % 10).repeat(size - 1)}\n`;
    ring.append(piece);
    all = (all + piece).slice(-1000);
    ok(ring.held < 2000, `held ${ring.held} characters`);
    if (i % 100 === 0 || i === 2999) deepEqual(ring.tail(10_000).join("\n") + "\n", all);
  }
  equal(ring.total - ring.dropped, 1000);
});
