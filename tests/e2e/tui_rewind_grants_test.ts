/**
 * `/rewind` in the interactive UI ends at once what the rewound part of the conversation was
 * allowed: a program the person allowed "for this session" there, started in the background,
 * stops when the person goes back to before that approval, not only at the next turn.
 */
import type { Script } from "../../src/llm/scripted.ts";
import { dialogReady, PLACEHOLDER, send, withTern } from "../support/tmux_run.ts";
import { bwrapNeed, testWith, tmuxNeed } from "../support/needs.ts";

/** Whether a process whose command line holds `text` is running. */
async function running(text: string): Promise<boolean> {
  const out = await new Deno.Command("pgrep", { args: ["-f", text], stdout: "null" }).output();
  return out.code === 0;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

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
      await until(() => running(`sleep ${seconds}`), "the background command");

      await send(tern, "/rewind");
      await tern.waitForText("Rewind to before");
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("files and conversation");
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("Apply this rewind?");
      await dialogReady();
      await tern.keys("Enter");
      await tern.waitForText("rewound:");
      // No turn runs after the rewind: the approval's end alone stops the command.
      await until(async () => !(await running(`sleep ${seconds}`)), "the command to stop");
    });
  },
);
