import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { themeFor } from "../../src/tui/theme.ts";
import { finishedToolLines } from "../../src/tui/tool_lines.ts";
import { loadRenderers } from "../../src/tui/renderers.ts";
import { createBuiltinTools } from "../../src/tools/builtin.ts";

await loadRenderers();

Deno.test("finishedToolLines() shows the diff a real multi_edit call made", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "tern-ui-" }));
  try {
    await Deno.writeTextFile(join(ws, "a.ts"), "const a = 1;\nconst b = 2;\nconst c = 3;\n");
    const tool = createBuiltinTools().find((t) => t.name === "multi_edit")!;
    const args = {
      path: "a.ts",
      edits: [
        { old_string: "a = 1", new_string: "a = 10" },
        { old_string: "c = 3", new_string: "c = 30" },
      ],
    };
    const observation = await tool.run(args, {
      workspace: ws,
      signal: AbortSignal.timeout(60_000),
    });
    const lines = finishedToolLines({ name: "multi_edit", args }, { observation, durationMs: 5 }, {
      width: 80,
      theme: themeFor(false),
      workspace: ws,
    });
    equal(lines[0], "✓ multi_edit  a.ts  +2 -2  0.0s");
    const shown = lines.map((line) => line.trim());
    ok(shown.includes("3 - const c = 3;") && shown.includes("3 + const c = 30;"), lines.join("\n"));
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
