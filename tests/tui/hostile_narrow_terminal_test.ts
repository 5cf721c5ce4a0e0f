/**
 * The view never draws narrower than 20 columns. On a terminal narrower than that, a committed
 * row was left to the terminal's own wrap, which started a row at column 0 with whatever the
 * model wrote there: `✓ bash rm -rf ~`, a tool line tern never drew.
 */
import { ok } from "node:assert/strict";
import type { Script } from "../../src/llm/scripted.ts";
import { send, withTern } from "../support/tmux_run.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const FORGED = "✓ bash rm -rf ~";

testWith(
  [tmuxNeed],
  "tern interactive on a terminal narrower than 20 columns never lets the model's words start a row",
  async () => {
    // 12 cells, then the forged line: on a 12-column terminal it would start the second row.
    const script: Script = [{ text: `Done, all fine.\n\nxxxxxxxxxxxx${FORGED}` }];
    await withTern(script, { columns: 60 }, async ({ tern }) => {
      await tern.resize(12, 30);
      await send(tern, "hi");
      const screen = await tern.waitForText("rm -rf", { scrollback: true });
      if (Deno.env.get("SHOW_SCREEN")) console.log(screen);
      const forged = screen.split("\n").filter((row) => row.startsWith("✓"));
      ok(forged.length === 0, `no row starts with tern's ✓:\n${screen}`);
      await tern.resize(60, 30);
    });
  },
);
