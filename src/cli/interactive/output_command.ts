/** `/output [n]`: a finished command's whole output, into the transcript. */
import { keptOutputLines } from "../../tui/output_view.ts";
import type { KeptOutput } from "../../tui/view.ts";
import type { SlashCommand } from "./commands.ts";

/** The `/output` command over the outputs `kept` returns (the view's `output()`). */
export function outputCommand(kept: (n?: number) => KeptOutput | undefined): SlashCommand {
  return {
    name: "output",
    description: "a finished command's whole output (the last one, or number n); also Ctrl-O",
    usage: "[n]",
    whileRunning: true,
    run(context, args) {
      const text = args.trim();
      if (text !== "" && !/^\d+$/.test(text)) {
        throw new Error(`Cannot show output "${text}": give the number shown under the command`);
      }
      const found = kept(text === "" ? undefined : Number(text));
      if (found === undefined) {
        context.notice(
          text === ""
            ? "No command output yet"
            : `Cannot show output ${text}: no such output (the last 50 are kept)`,
          text === "" ? "info" : "error",
        );
        return;
      }
      context.print(keptOutputLines(found, context.width(), context.theme));
    },
  };
}
