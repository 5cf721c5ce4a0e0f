/**
 * Issue 30 part 11: `/pin` instructions ride in every request after the system prompt and
 * survive a compaction; `/compact` shows what it will summarise and keep before it does.
 * Line mode (no terminal) against the scripted model server.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import type { ModelRequest } from "../../src/llm/types.ts";
import { withScriptedServer } from "../support/scripted_server.ts";
import { runTernWithInput, tempWorkspace } from "../support/tern_process.ts";
import { sessionEntries } from "../support/tmux_run.ts";

const LONG = "The build uses make and the tests run with deno test. ".repeat(200);
const PIN = "Always name the file you changed in the first line.";

/**
 * The model, answering by what is asked (a background memory consolidation may ask at any
 * point): a summary for a compaction, a long answer to a `task` line, a short one otherwise.
 */
function script(request: ModelRequest) {
  const system = String(request.messages[0]?.content);
  if (system.startsWith("You compact")) return { text: "## Goal\nSummary of the early turns." };
  if (!system.startsWith("You are tern")) return { text: "{}" };
  const last = String(request.messages.at(-1)?.content);
  return { text: last.startsWith("task") ? `Answer to ${last}. ${LONG}` : `Done: ${last}` };
}

Deno.test("tern line mode: /pin survives /compact, which first shows what it summarises and keeps", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer(
      script,
      async (server) => {
        const env = {
          HOME: ws.home,
          TERN_HOME: join(ws.home, ".tern"),
          TERN_BASE_URL: server.baseUrl,
          TERN_MODEL: "scripted-model",
          TERN_API_KEY: "x",
          TERN_CONTEXT_WINDOW: "20000",
          TERN_COMPACT_AT: "0.95",
          NO_COLOR: "1",
        };
        const input = [
          `/pin ${PIN}`,
          "/pin",
          "task one",
          "task two",
          "task three",
          "task four",
          "task five",
          "/compact",
          "after the compaction",
          "/pin rm 1",
          "/pin",
          "once more",
        ].join("\n") + "\n";
        const run = await runTernWithInput([], input, { cwd: ws.dir, env });
        equal(run.code, 0, run.stderr);
        const out = run.stdout;
        ok(out.includes(`1. ${PIN}`), out);
        // The preview came before the compaction, with counts on both sides.
        const preview = out.indexOf("compaction preview:");
        ok(preview >= 0, out);
        const summarise = /summarise: (\d+) turns?, (\d+) entr(?:y|ies), ~(\d+) tokens/.exec(out);
        const keep = /keep: +(\d+) turns?, (\d+) entr(?:y|ies), ~(\d+) tokens/.exec(out);
        ok(summarise && keep, out);
        ok(Number(summarise[1]) >= 1 && Number(keep[1]) >= 1, out);
        equal(Number(summarise[2]) + Number(keep[2]), 10, out);
        ok(preview < out.search(/compacted \d+ entries/), out);
        // The compaction summarised exactly the entries the preview counted.
        const entries = await sessionEntries(join(ws.home, ".tern"));
        const compaction = entries.find((entry) => entry.type === "compaction")!;
        equal(compaction.summarisedCount, Number(summarise[2]));
        equal(compaction.summarised, undefined, "no list of ids that grows with the history");
        ok(entries.some((entry) => entry.type === "pins"), "the pins are in the session file");

        const turns = server.requests.filter((r) =>
          String(r.modelRequest.messages[0]?.content).startsWith("You are tern")
        );
        equal(turns.length, 7);
        const system = (index: number) => {
          const first = turns[index].modelRequest.messages[0];
          equal(first.role, "system");
          return String(first.content);
        };
        for (const index of [0, 4]) ok(system(index).includes(PIN), system(index));
        // The request after the compaction: the summary replaced the first turn, the pin stayed.
        const after = turns[5].modelRequest.messages;
        ok(system(5).includes(PIN), system(5));
        ok(!after.some((m) => m.content === "task one"), "task one was summarised");
        ok(after.some((m) => String(m.content).includes("Summary of the early turns.")));
        // Removed: the next request has no pin.
        ok(out.includes(`unpinned 1: ${PIN}`), out);
        ok(out.includes("no pinned instructions"), out);
        ok(!system(6).includes(PIN), system(6));
      },
    );
  } finally {
    await ws.cleanup();
  }
});

Deno.test("tern line mode: /compact's preview, like the compaction, counts no subagent's result as the person's turn", async () => {
  const ws = await tempWorkspace();
  try {
    await withScriptedServer(script, async (server) => {
      const env = {
        HOME: ws.home,
        TERN_HOME: join(ws.home, ".tern"),
        TERN_BASE_URL: server.baseUrl,
        TERN_MODEL: "scripted-model",
        TERN_API_KEY: "x",
        TERN_CONTEXT_WINDOW: "128000",
        NO_COLOR: "1",
      };
      // Two long results in the form a subagent's completion takes, after the person's turns:
      // the person's last two turns lie further back than the recent part's tokens alone keep.
      const result = (n: number) =>
        `[subagent t${n} (a${n}, child session 0000000${n}-0000-4000-8000-000000000000) ` +
        `completed] ${"finding ".repeat(4_500)}`;
      const input = ["task one", "task two", "task three", "task four", result(1), result(2)]
        .concat("/compact").join("\n") + "\n";
      const run = await runTernWithInput([], input, { cwd: ws.dir, env });
      equal(run.code, 0, run.stderr);
      const summarise = /summarise: (\d+) turns?, (\d+) entr(?:y|ies)/.exec(run.stdout);
      ok(summarise, run.stdout);
      const entries = await sessionEntries(join(ws.home, ".tern"));
      const compaction = entries.findLast((entry) => entry.type === "compaction");
      ok(compaction, run.stdout);
      // The preview showed the cut the compaction made: the person's last two turns kept.
      equal(entries.filter((entry) => entry.type === "compaction").length, 1, run.stdout);
      equal(compaction.summarisedCount, Number(summarise[2]), run.stdout);
      equal(compaction.summarisedCount, 4, "tasks one and two, with their answers");
    });
  } finally {
    await ws.cleanup();
  }
});
