/**
 * The person's latest request, kept word for word when a compaction summarises it. A long
 * single-request task is compacted inside its one turn (chooseCut), and a summary must not be
 * the only record of what the person asked: a model's may be steered by what it summarises (a
 * prompt-injected file or tool output), and the fallback's keeps one line of it.
 */
import { userTurnIndices } from "./compaction_cut.ts";
import type { ContextItem, VoiceOf } from "./compaction_types.ts";
import { summaryFromMessage } from "./summary.ts";
import { estimateTokens } from "./tokens.ts";
import { trimMiddle } from "./trim.ts";

/** The line that opens tern's copy of the request: the last part of a summary that has one. */
export const LATEST_REQUEST_HEADING =
  "## The person's latest request, word for word (kept by tern, not written by a model)";

/** The most characters of the request a summary keeps (head and tail, a marker between). */
export const LATEST_REQUEST_CHARS = 4_000;

/**
 * The person's latest request when the cut before `items[cut]` summarises it: the request
 * itself when it lies before the cut, or, when no request of the person's is left among the
 * items, tern's copy in the newest earlier summary (an item before the cut, else
 * `previousSummary`). Undefined when a request of the person's is kept whole.
 */
export function summarisedRequest(
  items: ContextItem[],
  cut: number,
  options: { voiceOf?: VoiceOf; previousSummary?: string } = {},
): string | undefined {
  const last = userTurnIndices(items, options.voiceOf).at(-1);
  if (last !== undefined) return last < cut ? items[last].message.content : undefined;
  for (let i = cut - 1; i >= 0; i--) {
    const earlier = summaryFromMessage(items[i].message);
    const copy = earlier === undefined ? undefined : requestCopy(earlier);
    if (copy !== undefined) return copy;
  }
  return options.previousSummary === undefined ? undefined : requestCopy(options.previousSummary);
}

/**
 * `summary` followed by tern's copy of `request`, or alone when `request` is undefined. The
 * copy is cut in its middle to LATEST_REQUEST_CHARS, and further to about `maxTokens`
 * (estimated). Either way a line of `summary` that reads as the copy's heading, which a model
 * may write to pass its own words off as the person's, gets a backslash first: only tern's
 * heading opens a copy.
 */
export function withLatestRequest(
  summary: string,
  request: string | undefined,
  maxTokens: number,
): string {
  const heading = LATEST_REQUEST_HEADING.toLowerCase();
  const own = summary.split("\n").map((line) =>
    line.trim().toLowerCase() === heading ? `\\${line}` : line
  ).join("\n");
  if (request === undefined) return own;
  let copy = trimMiddle(request, LATEST_REQUEST_CHARS, "request");
  const tokens = estimateTokens(copy);
  if (tokens > maxTokens) {
    copy = trimMiddle(request, Math.floor(copy.length * maxTokens / tokens * 0.9), "request");
  }
  return `${own}\n\n${LATEST_REQUEST_HEADING}\n${copy}`;
}

/** tern's copy of the request in a summary made by `withLatestRequest`, or undefined. */
function requestCopy(summary: string): string | undefined {
  const at = summary.indexOf(`\n${LATEST_REQUEST_HEADING}\n`);
  return at === -1 ? undefined : summary.slice(at + LATEST_REQUEST_HEADING.length + 2);
}
