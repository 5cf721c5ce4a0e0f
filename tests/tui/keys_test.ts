import { deepEqual } from "node:assert/strict";
import { key, type KeyEvent, textKey } from "../../src/tui/key_event.ts";
import { KeyDecoder } from "../../src/tui/keys.ts";

const encoder = new TextEncoder();

/** Adjacent text events merged: byte-by-byte feeding splits runs that a whole read keeps. */
function merged(events: KeyEvent[]): KeyEvent[] {
  const out: KeyEvent[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (
      event.kind === "key" && event.name === "text" && last?.kind === "key" && last.name === "text"
    ) {
      out[out.length - 1] = textKey((last.text ?? "") + (event.text ?? ""));
    } else {
      out.push(event);
    }
  }
  return out;
}

/** Events from `input` fed in one read, then flushed. */
function whole(input: string): KeyEvent[] {
  const decoder = new KeyDecoder();
  return [...decoder.feed(encoder.encode(input)), ...decoder.flush()];
}

/** Events from `input` fed one byte per read (no flush in between), then flushed. */
function byteByByte(input: string): KeyEvent[] {
  const decoder = new KeyDecoder();
  const events: KeyEvent[] = [];
  for (const byte of encoder.encode(input)) events.push(...decoder.feed(new Uint8Array([byte])));
  return merged([...events, ...decoder.flush()]);
}

/** Asserts `input` decodes to `expected` both whole and byte by byte. */
function decodes(input: string, expected: KeyEvent[]): void {
  deepEqual(whole(input), expected, `whole: ${JSON.stringify(input)}`);
  deepEqual(byteByByte(input), merged(expected), `byte by byte: ${JSON.stringify(input)}`);
}

Deno.test("KeyDecoder.feed() coalesces a printable run into one text event", () => {
  decodes("hello wörld 日本", [textKey("hello wörld 日本")]);
});

Deno.test("KeyDecoder.feed() joins a UTF-8 character split across reads", () => {
  const decoder = new KeyDecoder();
  const bytes = encoder.encode("é👍");
  deepEqual(decoder.feed(bytes.subarray(0, 1)), []);
  deepEqual(decoder.feed(bytes.subarray(1, 3)), [textKey("é")]);
  deepEqual(decoder.feed(bytes.subarray(3)), [textKey("👍")]);
});

Deno.test("KeyDecoder.feed() names control bytes", () => {
  decodes("\r", [key("enter")]);
  decodes("\n", [key("j", { ctrl: true })]);
  decodes("\t", [key("tab")]);
  decodes("\x7f", [key("backspace")]);
  decodes("\x08", [key("backspace")]);
  decodes("\x01\x03\x1a", [
    key("a", { ctrl: true }),
    key("c", { ctrl: true }),
    key("z", { ctrl: true }),
  ]);
  decodes("\x00", [key("space", { ctrl: true })]);
  decodes("ab\x05cd", [textKey("ab"), key("e", { ctrl: true }), textKey("cd")]);
});

Deno.test("KeyDecoder.flush() turns a lone Esc into escape", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed("\x1b"), []);
  deepEqual(decoder.flush(), [key("escape")]);
  deepEqual(decoder.flush(), []);
});

Deno.test("KeyDecoder.feed() reads Esc before a key as Alt", () => {
  decodes("\x1bb", [key("b", { alt: true })]);
  decodes("\x1bB", [key("b", { alt: true, shift: true })]);
  decodes("\x1b\r", [key("enter", { alt: true })]);
  decodes("\x1b\x7f", [key("backspace", { alt: true })]);
  decodes("\x1b\x1b", [key("escape"), key("escape")]);
  decodes("\x1b\x1b[D", [key("left", { alt: true })]);
});

Deno.test("KeyDecoder.feed() decodes CSI and SS3 keys with xterm modifiers", () => {
  decodes("\x1b[A\x1b[B\x1b[C\x1b[D", [key("up"), key("down"), key("right"), key("left")]);
  decodes("\x1bOA\x1bOH\x1bOF", [key("up"), key("home"), key("end")]);
  decodes("\x1b[H\x1b[F\x1b[1~\x1b[4~", [key("home"), key("end"), key("home"), key("end")]);
  decodes("\x1b[5~\x1b[6~\x1b[3~\x1b[2~", [
    key("pageup"),
    key("pagedown"),
    key("delete"),
    key("insert"),
  ]);
  decodes("\x1bOP\x1b[15~\x1b[24~", [key("f1"), key("f5"), key("f12")]);
  decodes("\x1b[1;5A", [key("up", { ctrl: true })]);
  decodes("\x1b[1;3D", [key("left", { alt: true })]);
  decodes("\x1b[1;2C", [key("right", { shift: true })]);
  decodes("\x1b[3;5~", [key("delete", { ctrl: true })]);
  decodes("\x1b[Z", [key("tab", { shift: true })]);
});

Deno.test("KeyDecoder.feed() decodes the kitty keyboard protocol", () => {
  decodes("\x1b[13;2u", [key("enter", { shift: true })]);
  decodes("\x1b[99;5u", [key("c", { ctrl: true })]);
  decodes("\x1b[27u", [key("escape")]);
  decodes("\x1b[97;3u", [key("a", { alt: true })]);
  decodes("\x1b[127;5u", [key("backspace", { ctrl: true })]);
  decodes("\x1b[97;2u", [textKey("A")]);
  decodes("\x1b[1;5:1A", [key("up", { ctrl: true })]);
});

Deno.test("KeyDecoder.feed() ignores kitty key releases and modifier keys", () => {
  decodes("\x1b[99;5:3u", []);
  decodes("\x1b[1;1:3A", []);
  decodes("\x1b[57441;2u", []);
  decodes("x\x1b[13;1:3uy", [textKey("x"), textKey("y")]);
});

Deno.test("KeyDecoder.feed() decodes xterm modifyOtherKeys Shift+Enter", () => {
  decodes("\x1b[27;2;13~", [key("enter", { shift: true })]);
  decodes("\x1b[27;5;99~", [key("c", { ctrl: true })]);
});

Deno.test("KeyDecoder.feed() returns a bracketed paste as one event with \\n newlines", () => {
  decodes("a\x1b[200~line 1\r\nline 2\rline 3\nend\x1b[201~b", [
    textKey("a"),
    { kind: "paste", text: "line 1\nline 2\nline 3\nend" },
    textKey("b"),
  ]);
});

Deno.test("KeyDecoder.feed() keeps a paste split across many reads, escapes inside included", () => {
  const decoder = new KeyDecoder();
  const events: KeyEvent[] = [];
  for (const chunk of ["\x1b[20", "0~first\x1b[A ", "日", "本\x1b", "[201", "x\x1b[20", "1~"]) {
    events.push(...decoder.feed(chunk));
    events.push(...decoder.flush());
  }
  deepEqual(events, [{ kind: "paste", text: "first\x1b[A 日本\x1b[201x" }]);
});

Deno.test("KeyDecoder.feed() reports terminal replies instead of keys", () => {
  decodes("\x1b[?1u", [{ kind: "report", sequence: "\x1b[?1u" }]);
  decodes("\x1b[?2026;2$y", [{ kind: "report", sequence: "\x1b[?2026;2$y" }]);
  decodes("\x1b[?62;22c", [{ kind: "report", sequence: "\x1b[?62;22c" }]);
  decodes("\x1b[12;40R", [{ kind: "report", sequence: "\x1b[12;40R" }]);
  decodes("\x1b]11;rgb:0000/0000/0000\x07", [
    { kind: "report", sequence: "\x1b]11;rgb:0000/0000/0000\x07" },
  ]);
});

Deno.test("KeyDecoder.feed() drops unknown sequences without printing them", () => {
  decodes("a\x1b[<0;10;5Mb\x1b[99Xc\x1b[I", [textKey("a"), textKey("b"), textKey("c")]);
  decodes("\x1bO5Zq", [textKey("q")]);
});

Deno.test("KeyDecoder.flush() keeps waiting for the end of a cut sequence", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed("\x1b[1;"), []);
  deepEqual(decoder.flush(), []);
  deepEqual(decoder.feed("5Az"), [key("up", { ctrl: true }), textKey("z")]);
  deepEqual(decoder.flush(), []);
});

Deno.test("KeyDecoder.flush() reads Esc and an opening bracket alone as Alt+[", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed("\x1b["), []);
  deepEqual(decoder.flush(), [key("[", { alt: true })]);
});

Deno.test("KeyDecoder.feed() drops a sequence broken by a control byte and keeps the byte", () => {
  decodes("\x1b[1;\x01", [key("a", { ctrl: true })]);
});

Deno.test("KeyDecoder.flush() does not end a paste still arriving", () => {
  const decoder = new KeyDecoder();
  deepEqual(decoder.feed("\x1b[200~slow"), []);
  deepEqual(decoder.flush(), []);
  deepEqual(decoder.feed(" paste\x1b[201~"), [{ kind: "paste", text: "slow paste" }]);
});
