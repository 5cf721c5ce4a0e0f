import { ok } from "node:assert/strict";
import { transcriptLines } from "../../src/cli/interactive/replay_lines.ts";
import type { ReplayState } from "../../src/session/replay.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { TranscriptView } from "../../src/tui/view.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";

await loadRenderers();

Deno.test("transcriptLines() shows a resumed call's arguments as written, escapes made visible", () => {
  const theme = themeFor(false);
  // Raw arguments as a model may send them: not escaped the way JSON would.
  const args = '{"command":"echo a; \x1b]0;$(touch PWNED)\x07; echo \u202eb"}';
  const state = {
    items: [{
      id: "1",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "bash", arguments: args }],
      },
    }],
  } as unknown as ReplayState;
  const view = new TranscriptView({ theme, workspace: "/w" });
  const text = transcriptLines(state, view, theme, 120).join("\n");
  ok(text.includes('↳ bash {"command":"echo a; ␛]0;$(touch PWNED)␇; echo ⟨U+202E⟩b"}'), text);
});

Deno.test("transcriptLines() shows a resumed call's tool name with its escapes made visible", () => {
  const theme = themeFor(false);
  // A name no tool has, as a model may send it: stripping the title sequence would show "notool".
  const name = "no\x1b]0;TITLE\x07tool";
  const state = {
    items: [{
      id: "1",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name, arguments: "{}" }],
      },
    }],
  } as unknown as ReplayState;
  const view = new TranscriptView({ theme, workspace: "/w" });
  const text = transcriptLines(state, view, theme, 120).join("\n");
  ok(text.includes("↳ no␛]0;TITLE␇tool {}"), text);
  ok(!text.includes("\x1b"), "no escape sequence reaches the screen");
});
