/**
 * `/rewind` in the interactive UI ends at once what the rewound part of the conversation was
 * allowed: a program the person allowed "for this session" there, started in the background,
 * stops when the person goes back to before that approval, not only at the next turn.
 */
import type { Script } from "../../src/llm/scripted.ts";
import {
  dialogReady,
  PLACEHOLDER,
  rewindLast,
  send,
  waitUntil,
  withTern,
} from "../support/tmux_run.ts";
import { runningWith } from "../harness/_processes.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

testWith(
  [tmuxNeed, bwrapNeed],
  "tern interactive /rewind to before a session approval stops the background command it allowed",
  async () => {
    // Unique to this test: what pgrep looks for.
    const seconds = `${300 + Math.floor(Math.random() * 10_000) / 1000}`;
    const script: Script = [
      {
        toolCalls: [{
          id: "c1",
          name: "bash",
          arguments: JSON.stringify({
            command: `perl -e "sleep ${seconds}"`,
            run_in_background: true,
          }),
        }],
      },
      { text: "Started the sleeper." },
    ];
    await withTern(script, {}, async ({ tern }) => {
      await send(tern, "start a sleeper");
      await tern.waitForText("[a] allow for this session");
      await dialogReady();
      await tern.keys("a");
      await tern.waitForText("Started the sleeper.");
      await tern.waitFor((screen) => screen.includes(PLACEHOLDER), "the prompt");
      await waitUntil(() => runningWith(`sleep ${seconds}`), "the background command");

      await rewindLast(tern);
      await tern.waitForText("Apply this rewind?");
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("rewound:");
      // No turn runs after the rewind: the approval's end alone stops the command.
      await waitUntil(async () => !(await runningWith(`sleep ${seconds}`)), "the command to stop");
    });
  },
);
