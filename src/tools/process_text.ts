/** How background processes read in the process tools' results and the `/procs` view. */
import { cutBack } from "../core/code_points.ts";
import type { ProcessInfo } from "../sandbox/background.ts";
import { visibleText } from "../core/terminal_text.ts";
import { truncateMiddle } from "./truncate.ts";

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
 * obeyed or dropped (an escape sequence in it would hide part of it from `/procs`). A cut never
 * parts a surrogate pair (an emoji): half of one left alone makes every later request that
 * carries the result invalid for model APIs that reject lone surrogates.
 */
function oneLine(command: string): string {
  const line = visibleText(command);
  if (line.length <= 200) return line;
  return `${line.slice(0, cutBack(line, 199))}…`;
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

/**
 * Log lines as a tool result shows them: at most `maxChars` (head and tail kept) and well-formed.
 * The log keeps its newest characters and a cut in the middle keeps its ends, so either may split
 * a surrogate pair (an emoji); a half left alone makes the request that carries the result invalid
 * for model APIs that reject lone surrogates, in every turn after. Each half becomes U+FFFD.
 */
export function logText(lines: readonly string[], maxChars: number): string {
  return truncateMiddle(lines.join("\n"), maxChars).toWellFormed();
}
