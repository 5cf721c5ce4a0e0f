/** How background processes read in the process tools' results and the `/procs` view. */
import type { ProcessInfo } from "../sandbox/background.ts";
import { visibleText } from "../core/terminal_text.ts";

/** One line: id, state, exit code, readiness, confinement and command. */
export function describeProcess(info: ProcessInfo): string {
  const state = info.exitCode === null ? info.state : `${info.state} (exit code ${info.exitCode})`;
  const parts = [
    `${info.id} ${state}`,
    ...(info.readiness ? [`ready on ${info.readiness}`] : []),
    ...(info.confined ? [] : ["no sandbox"]),
  ];
  return `${parts.join(", ")}: ${oneLine(info.command)}`;
}

/**
 * The command on one line as it runs: controls, line breaks and invisible characters shown, not
 * obeyed or dropped (an escape sequence in it would hide part of it from `/procs`).
 */
function oneLine(command: string): string {
  const line = visibleText(command);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
