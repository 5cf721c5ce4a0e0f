import { deepEqual, ok } from "node:assert/strict";
import type { ReviewRequest } from "../../src/sandbox/review.ts";
import { permissionDialog } from "../../src/tui/dialogs.ts";
import { Screen } from "../../src/tui/screen.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth } from "../../src/tui/width.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { VtScreen } from "../support/vt_screen.ts";

await loadRenderers();

// deno-lint-ignore no-control-regex
const plain = (line: string) => line.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "").trimEnd();

/** Grapheme clusters string-width counts as one or two cells that tmux draws much wider. */
const WIDTH_LIES: Record<string, string> = {
  "a Thai SARA AM run": "# \u0e01" + "\u0e33".repeat(500),
  "Devanagari conjuncts": "# " + "\u0915\u094d\u0937".repeat(60),
  "Hangul jamo": "# \u1100" + "\u1161".repeat(200),
  "emoji ZWJ sequences": "# " + "👨\u200d👩\u200d👧".repeat(30),
  "Arabic number signs": "# " + "\u0600".repeat(100) + "1",
  "lone surrogates": "# " + "\ud800".repeat(100),
};

/** A Screen drawing into a terminal that draws code point by code point, as tmux does. */
function terminal(columns: number, rows: number) {
  const vt = new VtScreen(columns, rows, { byCodePoint: true });
  const screen = new Screen({ write: (text) => vt.write(text) }, { columns, rows });
  return { vt, screen };
}

for (const [name, lie] of Object.entries(WIDTH_LIES)) {
  Deno.test(`Screen keeps every permission dialog row in place with ${name}`, () => {
    const command = `echo "Formatting the sources, then the tests"\nrm -rf src\n${lie}`;
    const request: ReviewRequest = {
      tool: "bash",
      args: { command },
      summary: command,
      command: true,
      reason: "destructive: deletes files (rm -rf)",
      profile: ":workspace",
      rememberable: true,
    };
    const { vt, screen } = terminal(80, 60);
    const dialog = permissionDialog(request, { theme: themeFor(true) }).render(80, 50);
    // A spinner line above the dialog changes between frames: only that row is rewritten.
    for (const spin of ["⠋", "⠙", "⠹", "⠸"]) screen.render([`${spin} bash`, ...dialog]);
    // A terminal drops a combining mark that starts a row: compared without them.
    const unmarked = (row: string) => row.replace(/\p{Mn}/gu, "");
    const frame = screen.frame.map(plain);
    deepEqual(vt.visible().slice(0, frame.length).map(unmarked), frame.map(unmarked));
    // A command's later lines behind the facts' gutter, each but the last ending with `↵`.
    ok(frame.includes("┊ rm -rf src↵"), frame.join("\n"));
    for (const row of frame) ok(visibleWidth(row) <= 80);
  });
}

Deno.test("Screen draws the live region with auto-wrap off and leaves it on", () => {
  const writes: string[] = [];
  const screen = new Screen({ write: (text) => writes.push(text) }, { columns: 20, rows: 10 });
  screen.render(["a", "b"]);
  screen.commit(["x".repeat(50)], { lines: ["a", "c"] });
  screen.finish();
  for (const text of writes) {
    ok(text.startsWith("\x1b[?7l") && text.endsWith("\x1b[?7h"), JSON.stringify(text));
  }
  // Committed lines are written with auto-wrap on: the terminal wraps them.
  ok(writes[1].includes("\x1b[?7h" + "x".repeat(50) + "\r\n\x1b[?7l"));
});

Deno.test("Screen keeps later frames in place when a row is drawn wider than counted", () => {
  // "é" as e + U+0301 that a terminal draws two cells wide: with auto-wrap on it would wrap.
  const vt = new VtScreen(10, 8);
  const screen = new Screen({
    write: (text) => vt.write(text.replaceAll("é", "日")),
  }, { columns: 10, rows: 8 });
  const rows = ["one", "é".repeat(8), "rm -rf src", "[y] [n]"];
  screen.render(rows);
  screen.render(["ONE", ...rows.slice(1)]);
  deepEqual(vt.visible().slice(0, 4), ["ONE", "日".repeat(5), "rm -rf src", "[y] [n]"]);
});
