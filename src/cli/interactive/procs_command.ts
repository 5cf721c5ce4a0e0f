/** `/procs`: the session's background processes (bash `run_in_background`), their state and output. */
import type { ProcessSupervisor } from "../../sandbox/background.ts";
import type { SecretMasker } from "../../sandbox/secrets.ts";
import { describeProcess } from "../../tools/process_text.ts";
import { screenLine } from "../../core/terminal_text.ts";
import { cleanText } from "../../tui/format.ts";
import { truncateToWidth } from "../../tui/width.ts";
import type { SlashCommand } from "./commands.ts";

/** Output lines shown under each process. */
const SHOWN_LINES = 3;

/**
 * The `/procs` lines: one per process, oldest first, with its last lines indented; secrets
 * masked and control sequences removed (the output is the process's, the command the model's),
 * each made one row (line breaks as spaces) and cut to `width` cells: a line the terminal
 * wrapped would start a row at the left edge, where a process's output could forge another
 * process's line.
 */
export function procsLines(
  supervisor: ProcessSupervisor,
  masker: SecretMasker,
  width: number,
): string[] {
  // Measured as the screen draws it: a carriage return that `cleanText()` made a line break is a
  // space there, so it must count as one, or 60 of them push the line's end past the edge.
  const shown = (text: string, room: number) =>
    truncateToWidth(screenLine(cleanText(masker.mask(text))), room);
  return supervisor.list().flatMap((info) => [
    shown(describeProcess(info), width),
    ...supervisor.tail(info.id, SHOWN_LINES).map((line) => `    ${shown(line, width - 4)}`),
  ]);
}

/** The `/procs` command: lists the processes; `/procs stop <id>` stops one. */
export function procsCommand(): SlashCommand {
  return {
    name: "procs",
    description: "background processes (bash run_in_background): state and last lines",
    usage: "[stop <id>]",
    whileRunning: true,
    async run(context, args) {
      const sandbox = await (await context.conversation()).sandbox();
      if (sandbox === undefined) {
        context.notice("No background processes in this session");
        return;
      }
      const supervisor = sandbox.runtime.processes;
      const [verb, id] = args.trim().split(/\s+/);
      if (verb === "stop" && id !== undefined) {
        const control = supervisor.control(false);
        // One that ended by itself (or was stopped before) is not said to be stopped now.
        const before = control.info(id).state;
        const ended = before === "exited" || before === "stopped";
        const info = await control.stop(id);
        const said = ended ? "Already ended, nothing to stop" : "Stopped";
        // Masked as the list is: the command may hold a key the person gave the model.
        const masker = sandbox.gate.options.masker;
        context.notice(cleanText(masker.mask(`${said}: ${describeProcess(info)}`)));
        return;
      }
      if (verb !== undefined && verb !== "") {
        throw new Error(`Cannot run "/procs ${args.trim()}": use /procs or /procs stop <id>`);
      }
      const lines = procsLines(supervisor, sandbox.gate.options.masker, context.width());
      if (lines.length === 0) context.notice("No background processes in this session");
      else context.print(lines);
    },
  };
}
