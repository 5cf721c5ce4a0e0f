/**
 * A hostile model for the scripted server: the agent's calls in order, then "done"; every
 * request without tools (the AUTO reviewer's) is answered "allow". What the tools answered
 * (`seen`, one per call after the first round) and what the reviewer was asked (`reviews`) are
 * recorded for the test to check.
 */
import type { ModelRequest } from "../../src/llm/types.ts";
import type { ScriptedReply } from "../../src/llm/scripted.ts";

export function hostileScript(
  calls: Array<[string, unknown]>,
  seen: string[],
  reviews: string[],
): (request: ModelRequest) => ScriptedReply {
  let round = 0;
  return (request) => {
    if (request.tools.length === 0) {
      reviews.push(request.messages.at(-1)?.content ?? "");
      return { text: '{"decision":"allow","reason":"the user wants it"}' };
    }
    if (round > 0) {
      const last = request.messages.at(-1);
      seen.push(last?.role === "tool" ? last.content : "");
    }
    const next = calls[round++];
    if (next === undefined) return { text: "done" };
    const [name, args] = next;
    return { toolCalls: [{ id: `c${round}`, name, arguments: JSON.stringify(args) }] };
  };
}
