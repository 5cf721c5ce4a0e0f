/**
 * The terminal prompt of `tern run`, or undefined when stdin or stderr is not a terminal. Its
 * code (ask_person.ts: the question's text, diffs and widths) loads at the first question, so a
 * run that asks none (every run whose output is piped, most others) never loads it before its
 * first model request.
 */
import type { AskPerson } from "../sandbox/review.ts";
import type { DiffSource } from "./ask_person.ts";

/** ask_person.ts's `terminalPerson()`, its module loaded when the first question comes. */
export function lazyTerminalPerson(diffs?: DiffSource): AskPerson | undefined {
  if (!Deno.stdin.isTerminal() || !Deno.stderr.isTerminal()) return undefined;
  let asker: Promise<AskPerson | undefined> | undefined;
  return async (request, signal) => {
    asker ??= import("./ask_person.ts").then((module) => module.terminalPerson(diffs));
    const ask = await asker;
    return ask === undefined ? "deny" : await ask(request, signal);
  };
}
