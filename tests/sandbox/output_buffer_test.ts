/**
 * The output kept of a command (src/sandbox/process.ts OutputBuffer): the first half of the
 * limit in characters, the last half in bytes of UTF-8, and the count of what was dropped,
 * checked against a plain model of it on random streams of text.
 */
import { equal, ok } from "node:assert/strict";
import { OutputBuffer } from "../../src/sandbox/process.ts";

const utf8 = new TextEncoder();

/** What the buffer must give for `pieces` under `limit`, computed from the whole text at once. */
function expected(pieces: string[], limit: number): string {
  const half = Math.max(1, Math.floor(limit / 2));
  const whole = pieces.join("");
  // A surrogate pair is not split: a head that would end in its first half leaves it out.
  let head = whole.slice(0, half);
  if (head.length < whole.length && /[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  const rest = whole.slice(head.length);
  // The longest run of whole characters at the end whose UTF-8 takes at most `half` bytes.
  const chars = [...rest];
  let tail = "";
  let bytes = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const size = utf8.encode(chars[i]).length;
    if (bytes + size > half) break;
    bytes += size;
    tail = chars[i] + tail;
  }
  const dropped = rest.length - tail.length;
  return dropped === 0 ? head + tail : `${head}\n[... ${dropped} characters dropped ...]\n${tail}`;
}

/** A small seeded generator, so a failing stream can be made again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Characters of 1 to 4 bytes of UTF-8 (the last one a surrogate pair). */
const ALPHABET = ["a", "b", "\n", "é", "€", "😀"];

Deno.test("OutputBuffer keeps the head in characters, the end in bytes, and counts what it dropped", () => {
  for (let seed = 1; seed <= 3000; seed++) {
    const next = random(seed);
    const limit = 1 + Math.floor(next() * 40);
    const pieces: string[] = [];
    const count = Math.floor(next() * 12);
    for (let p = 0; p < count; p++) {
      // Some pieces longer than the whole limit; pieces never split a character, as a
      // streaming decoder's never do.
      const length = next() < 0.2 ? Math.floor(next() * 3 * limit) : Math.floor(next() * 6);
      let piece = "";
      for (let c = 0; c < length; c++) piece += ALPHABET[Math.floor(next() * ALPHABET.length)];
      pieces.push(piece);
    }
    const buffer = new OutputBuffer(limit);
    for (const piece of pieces) buffer.append(piece);
    const text = buffer.text();
    equal(text, expected(pieces, limit), `seed ${seed}, limit ${limit}`);
    equal(buffer.total, pieces.join("").length);
  }
});

Deno.test("OutputBuffer stays well formed when a piece splits a surrogate pair", () => {
  for (let limit = 2; limit < 30; limit++) {
    const buffer = new OutputBuffer(limit);
    const text = "x😀".repeat(40);
    for (let at = 0; at < text.length; at += 3) buffer.append(text.slice(at, at + 3));
    const kept = buffer.text();
    const end = kept.slice(kept.lastIndexOf("\n") + 1);
    ok(end.isWellFormed(), JSON.stringify(end));
    ok(text.endsWith(end.replaceAll("\uFFFD", "")), `limit ${limit}: ${JSON.stringify(end)}`);
  }
});

Deno.test("OutputBuffer of a long stream keeps exactly its first and last half", () => {
  const buffer = new OutputBuffer(1000);
  let whole = "";
  for (let i = 0; i < 5000; i++) {
    const line = `line ${i}\n`;
    whole += line;
    buffer.append(line);
  }
  const dropped = whole.length - 1000;
  equal(
    buffer.text(),
    `${whole.slice(0, 500)}\n[... ${dropped} characters dropped ...]\n${whole.slice(-500)}`,
  );
});
