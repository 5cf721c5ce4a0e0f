/** How background processes read in the process tools' results and the `/procs` view. */
import type { ProcessInfo } from "../sandbox/background.ts";

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

function oneLine(command: string): string {
  const line = command.replace(/\s*\n\s*/g, " ");
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
