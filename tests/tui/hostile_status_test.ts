/**
 * The status line keeps what must never scroll out of view (the busy state and `unsandboxed`)
 * however long the model's name is: a project's config may set a name of any length, and it
 * pushed those off the line's end.
 */
import { ok } from "node:assert/strict";
import { type StatusInfo, statusLine } from "../../src/tui/status.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { themeFor } from "../../src/tui/theme.ts";
import { visibleWidth } from "../../src/tui/width.ts";

await loadRenderers();

const INFO: StatusInfo = {
  cwd: "/home/ada/proj",
  home: "/home/ada",
  model: "anthropic/claude-sonnet-4-5-" + "x".repeat(200),
  thinking: "off",
  mode: "bypass",
  profile: ":danger-full-access",
  sandbox: "unsandboxed",
  busy: "working 2.0s",
};

Deno.test("statusLine() keeps unsandboxed and the busy state beside a model name of any length", () => {
  for (const theme of [themeFor(false), themeFor(true)]) {
    for (const width of [40, 60, 80, 100, 160]) {
      const [line] = statusLine(INFO, width, theme);
      ok(visibleWidth(line) <= width, `${width}: ${line}`);
      ok(line.includes("unsandboxed"), `${width}: ${line}`);
      ok(line.includes("working 2.0s"), `${width}: ${line}`);
      ok(line.includes("anthr"), `${width}: the model: ${line}`);
    }
  }
});
