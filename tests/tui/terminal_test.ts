import assert from "node:assert/strict";
import {
  applyReport,
  CAPABILITY_QUERY,
  INITIAL_PROBE,
  parseReport,
  type ProbeState,
} from "../../src/tui/terminal.ts";

function probe(...sequences: string[]): ProbeState {
  return sequences.reduce(applyReport, INITIAL_PROBE);
}

Deno.test("parseReport() recognises kitty flags, DECRQM and device attributes replies", () => {
  assert.deepEqual(parseReport("\x1b[?1u"), { kind: "kitty-flags", flags: 1 });
  assert.deepEqual(parseReport("?0u"), { kind: "kitty-flags", flags: 0 });
  assert.deepEqual(parseReport("\x1b[?u"), { kind: "kitty-flags", flags: 0 });
  assert.deepEqual(parseReport("\x1b[?2026;2$y"), { kind: "mode", mode: 2026, setting: 2 });
  assert.deepEqual(parseReport("\x1b[?62;22;52c"), { kind: "device-attributes" });
  assert.deepEqual(parseReport("\x1b[?1;2c"), { kind: "device-attributes" });
  assert.equal(parseReport("\x1b[12;40R"), undefined);
  assert.equal(parseReport("\x1b[1u"), undefined, "a kitty key event is no flags reply");
  assert.equal(parseReport("\x1b[?2026;1y"), undefined);
});

Deno.test("applyReport() knows kitty support only from a flags reply before device attributes", () => {
  assert.deepEqual(probe("\x1b[?0u", "\x1b[?62c"), {
    kittyKeyboard: true,
    synchronizedOutput: false,
    complete: true,
  });
  assert.deepEqual(probe("\x1b[?62c", "\x1b[?1u"), {
    kittyKeyboard: false,
    synchronizedOutput: false,
    complete: true,
  });
  assert.equal(probe("\x1b[?1u").complete, false);
});

Deno.test("applyReport() treats mode 2026 set or reset as synchronized output support", () => {
  assert.equal(probe("\x1b[?2026;1$y", "\x1b[?1c").synchronizedOutput, true);
  assert.equal(probe("\x1b[?2026;2$y", "\x1b[?1c").synchronizedOutput, true);
  assert.equal(probe("\x1b[?2026;0$y", "\x1b[?1c").synchronizedOutput, false);
  assert.equal(probe("\x1b[?2026;4$y", "\x1b[?1c").synchronizedOutput, false);
  assert.equal(probe("\x1b[?2004;2$y", "\x1b[?1c").synchronizedOutput, false);
  assert.equal(probe("\x1b[?1c", "\x1b[?2026;2$y").synchronizedOutput, false);
  assert.equal(probe("\x1b[A", "x").complete, false, "other sequences change nothing");
});

Deno.test("CAPABILITY_QUERY asks for device attributes last", () => {
  assert.ok(CAPABILITY_QUERY.startsWith("\x1b[?u"));
  assert.ok(CAPABILITY_QUERY.includes("\x1b[?2026$p"));
  assert.ok(CAPABILITY_QUERY.endsWith("\x1b[c"));
});

Deno.test("openTerminal() rejects when stdin is not a terminal", async () => {
  const url = new URL("../../src/tui/terminal.ts", import.meta.url).href;
  const code = `import { openTerminal } from ${JSON.stringify(url)};
try { await openTerminal({ onInput() {}, onResize() {} }); console.log("opened"); }
catch (error) { console.log(error.message); }`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", code],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout).trim();
  assert.equal(text, "Cannot open the terminal: stdin is not a terminal");
});
