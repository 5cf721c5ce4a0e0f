/** How background processes read in the process tools' results and the `/procs` view. */
import type { ProcessInfo } from "../sandbox/background.ts";
import { visibleText } from "../core/terminal_text.ts";

/** One line: id, state, exit code, readiness, confinement and command. */
export function describeProcess(info: ProcessInfo): string {
  const state = info.exitCode === null ? info.state : `${info.state} (exit code ${info.exitCode})`;
  const parts = [
    `${info.id} ${state}`,
    ...(info.readiness ? [`ready on ${shortAscii(info.readiness)}`] : []),
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

/**
 * The model's readiness text in at most 40 cells, every character outside printable ASCII
 * written as its code point (`\u{4e2d}`): no wide, invisible or control character, and no
 * length, lets it push the command after it past the edge of `/procs`.
 */
function shortAscii(text: string): string {
  const line = text.replace(
    /[^\x20-\x7e]/gu,
    (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`,
  );
  return line.length > 40 ? `${line.slice(0, 39)}…` : line;
}
