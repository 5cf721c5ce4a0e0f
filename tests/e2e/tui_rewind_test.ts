/**
 * `/rewind` in the interactive UI, end to end in tmux: a turn writes two files, the person then
 * edits one of them; /rewind shows the diff and the conflict before anything changes, and keeps
 * the person's file when they say so while the other goes back.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import type { Script } from "../../src/llm/scripted.ts";
import {
  dialogReady,
  PLACEHOLDER,
  rewindLast,
  send,
  sessionEntries,
  withTern,
} from "../support/tmux_run.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

const write = (id: string, path: string, content: string) => ({
  toolCalls: [{ id, name: "write", arguments: JSON.stringify({ path, content }) }],
});

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive /rewind shows the diff and keeps a file the person changed since",
  async () => {
    const script: Script = [
      write("c1", "a.txt", "from the agent\n"),
      write("c2", "b.txt", "agent b\n"),
      { text: "Wrote both." },
    ];
    await withTern(script, { args: ["--mode", "bypass"] }, async ({ tern, dir, home }) => {
      await send(tern, "write two files");
      await tern.waitForText("Wrote both.");
      await tern.waitFor((screen) => screen.includes(PLACEHOLDER), "the prompt");
      Deno.writeTextFileSync(join(dir, "b.txt"), "the person's b\n");

      await rewindLast(tern);
      const asked = await tern.waitForText("changed outside tern since then");
      match(asked, /\+from the agent|-from the agent/, "the diff is shown before asking");
      match(asked, /conflict: "b\.txt"/);
      equal(Deno.readTextFileSync(join(dir, "a.txt")), "from the agent\n", "nothing changed yet");
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("rewound:");
      ok(!(await Deno.stat(join(dir, "a.txt")).then(() => true, () => false)), "a.txt removed");
      equal(Deno.readTextFileSync(join(dir, "b.txt")), "the person's b\n");
      const entries = await sessionEntries(home);
      ok(entries.some((entry) => entry.type === "branch"), "the conversation moved back");
    });
  },
);
