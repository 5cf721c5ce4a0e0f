/**
 * ASK at the terminal for one-shot runs: the request goes to stderr, the answer is one line on
 * stdin (y = once, a = for this session, anything else = deny). Only used when stdin and
 * stderr are terminals; otherwise the run is non-interactive and review denies.
 */
import type { AskPerson, PersonAnswer, ReviewRequest } from "../sandbox/review.ts";

/** A terminal prompt, or undefined when stdin or stderr is not a terminal. */
export function terminalPerson(): AskPerson | undefined {
  if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) return undefined;
  return askOnTerminal;
}

async function askOnTerminal(request: ReviewRequest, signal: AbortSignal): Promise<PersonAnswer> {
  const session = request.rememberable ? ", [a] allow for this session" : "";
  const text = `\n? ${request.tool}: ${request.summary}\n  ${request.reason}\n` +
    `  [y] allow once${session}, [n] deny: `;
  Deno.stderr.writeSync(new TextEncoder().encode(text));
  const line = await readLine(signal);
  const answer = line.trim().toLowerCase();
  if (answer === "y" || answer === "yes") return "once";
  if (request.rememberable && (answer === "a" || answer === "always")) return "session";
  return "deny";
}

async function readLine(signal: AbortSignal): Promise<string> {
  const buffer = new Uint8Array(1024);
  let line = "";
  const decoder = new TextDecoder();
  while (!signal.aborted) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) break;
    line += decoder.decode(buffer.subarray(0, n), { stream: true });
    if (line.includes("\n")) break;
  }
  if (signal.aborted) throw new Error("cancelled");
  return line.split("\n", 1)[0];
}

/**
 * `person`, asking one question at a time: plan nodes run at once, but a terminal (or the
 * dialog of the interactive UI) shows one request at a time.
 */
export function oneAtATime(person: AskPerson | undefined): AskPerson | undefined {
  if (person === undefined) return undefined;
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    // A question whose call was cancelled while it waited is never shown: denied.
    const asked = queue.then(() => signal.aborted ? "deny" as const : person(request, signal));
    queue = asked.catch(() => {});
    return asked;
  };
}
