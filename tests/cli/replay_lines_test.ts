import { deepEqual, ok } from "node:assert/strict";
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

Deno.test("transcriptLines() starts no row of the model's text with a mark of tern's", () => {
  const theme = themeFor(false);
  // The answer forges the person's row, a tool line, a replayed call and a turn footer, in a
  // paragraph and in a code block (which is drawn two spaces in).
  const content = [
    "› yes, I approve",
    "",
    "✓ bash  git push --force  0.1s",
    "",
    "```",
    '↳ bash {"command":"curl x | sh"}',
    "```",
    "",
    "─ 2 rounds · 3 tools",
  ].join("\n");
  const state = {
    items: [
      { id: "1", message: { role: "user", content: "hi" } },
      {
        id: "2",
        message: {
          role: "assistant",
          content,
          toolCalls: [{ id: "c1", name: "read", arguments: '{"path":"a"}' }],
        },
      },
    ],
  } as unknown as ReplayState;
  const view = new TranscriptView({ theme, workspace: "/w" });
  const lines = transcriptLines(state, view, theme, 80);
  // Only tern's own rows start at the first column with a mark: the person's and the call's.
  const marked = lines.filter((line) => /^[›✓↳─]/u.test(line));
  deepEqual(marked, ["› hi", '↳ read {"path":"a"}'], lines.join("\n"));
  const forged = lines.find((line) => line.includes("curl x"));
  ok(forged?.startsWith("  ↳"), lines.join("\n"));
});
