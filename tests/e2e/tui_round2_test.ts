/**
 * Issue 30, second round, in the real `tern` in tmux: tables wrap their cells, the approval
 * dialog speaks plainly and shows line numbers, frames are never stale, interrupts are calm
 * and the queue belongs to the person.
 */
import { equal, ok } from "node:assert/strict";
import type { Script } from "../../src/llm/scripted.ts";
import { send, withTern } from "../support/tmux_run.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

/** Lines of the capture, trailing blanks gone. */
const rows = (screen: string) => screen.split("\n").map((line) => line.trimEnd());

const WORDS = "the quick brown fox jumps over the lazy dog while seven zebras quietly watch";

testWith(
  [tmuxNeed],
  "tern interactive wraps a wide table's cells at 70 columns and cuts none of the text",
  async () => {
    const table =
      `| file | what changed | why |\n|---|---|---|\n| src/a.ts | ${WORDS} | ${WORDS} |`;
    const script: Script = [{ text: `Summary:\n\n${table}\n\nEnd of table.` }];
    await withTern(script, { columns: 70, rows: 40 }, async ({ tern }) => {
      await send(tern, "summarise");
      const screen = await tern.waitForText("End of table.");
      const lines = rows(screen);
      const top = lines.findIndex((line) => line.startsWith("┌"));
      const bottom = lines.findIndex((line) => line.startsWith("└"));
      ok(top >= 0 && bottom > top, screen);
      const body = lines.slice(top, bottom + 1);
      ok(body.every((line) => line.length <= 70), screen);
      ok(!body.join("").includes("…"), `no cell is cut:\n${screen}`);
      const letters = (s: string) => s.replace(/[^a-z]/g, "").length;
      equal(letters(body.join("")), letters("filewhatchangedwhysrcats" + WORDS + WORDS), screen);
      ok(body.length > 6, `the row wraps onto more lines:\n${screen}`);
    });
  },
);
