/**
 * Issue 30 part 11 in the real `tern` in tmux: `/compact` shows what it would summarise and
 * keep and asks first, No selected; declining changes nothing. `/pin` survives the compaction.
 */
import { equal, ok } from "node:assert/strict";
import type { ModelRequest } from "../../src/llm/types.ts";
import { dialogReady, send, sessionEntries, withTern } from "../support/tmux_run.ts";
import { testWith, tmuxNeed } from "../support/needs.ts";

const LONG = "The build uses make and the tests run with deno test. ".repeat(200);
const PIN = "Always name the file you changed first.";

const isTurn = (request: ModelRequest) =>
  String(request.messages[0]?.content).startsWith("You are tern");

/** Answers by what is asked: a background memory consolidation may ask at any point. */
function script(request: ModelRequest) {
  const system = String(request.messages[0]?.content);
  if (system.startsWith("You compact")) return { text: "## Goal\nSummary of the early turns." };
  if (!isTurn(request)) return { text: "{}" };
  const last = String(request.messages.at(-1)?.content);
  return { text: last.startsWith("task") ? `Answer to ${last}. ${LONG}` : `Done: ${last}` };
}

testWith(
  [tmuxNeed],
  "tern interactive /compact previews the cut and asks first; No changes nothing, Yes compacts and the pin stays",
  async () => {
    const env = { TERN_CONTEXT_WINDOW: "20000", TERN_COMPACT_AT: "0.95" };
    await withTern(script, { columns: 100, rows: 40, env }, async ({ tern, server, home }) => {
      const tasks = ["one", "two", "three", "four", "five"];
      for (const [i, n] of tasks.entries()) {
        await send(tern, `task ${n}`);
        // The turn's footer: the turn ended and its messages are in the session.
        await tern.waitFor(
          (screen) => screen.split("─ 1 round").length === i + 2,
          `the end of turn ${i + 1}`,
          { scrollback: true },
        );
        // After a turn: the slash commands that load in the background are there by then.
        if (i === 0) {
          await send(tern, `/pin ${PIN}`);
          await tern.waitForText("pinned 1");
        }
      }
      // A background memory consolidation may ask the model and write its entry meanwhile.
      const summaries = () =>
        server.requests.filter((r) =>
          String(r.modelRequest.messages[0]?.content).startsWith("You compact")
        ).length;
      const ownEntries = async () =>
        (await sessionEntries(home)).filter((entry) => entry.type !== "consolidation");
      const entriesBefore = (await ownEntries()).length;

      await send(tern, "/compact");
      const dialog = await tern.waitForText("Compact the conversation?", { scrollback: false });
      ok(/summarise: \d+ turns?, \d+ entr(y|ies), ~\d+ tokens/.test(dialog), dialog);
      ok(/keep: +\d+ turns?, \d+ entr(y|ies), ~\d+ tokens/.test(dialog), dialog);
      ok(/› No, keep the conversation as it is/.test(dialog), dialog);
      // Enter takes the default: No.
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("not compacted: the conversation is unchanged");
      equal(summaries(), 0, "no summary was asked for");
      const entries = await ownEntries();
      equal(entries.length, entriesBefore, "nothing was written to the session");
      ok(!entries.some((entry) => entry.type === "compaction"));

      await send(tern, "/compact");
      await tern.waitForText("Compact the conversation?", { scrollback: false });
      await dialogReady();
      await tern.keys("Down");
      await tern.keys("Enter");
      await tern.waitFor((screen) => /• compacted \d+ entries/.test(screen), "the compaction", {
        scrollback: true,
      });
      ok((await sessionEntries(home)).some((entry) => entry.type === "compaction"));
      equal(summaries(), 1);

      await send(tern, "after the compaction");
      await tern.waitForText("Done: after the compaction");
      const last = server.requests.filter((r) => isTurn(r.modelRequest)).at(-1)!.modelRequest;
      ok(String(last.messages[0].content).includes(PIN), String(last.messages[0].content));
      ok(!last.messages.some((m) => m.content === "task one"), "task one was summarised");
    });
  },
);
