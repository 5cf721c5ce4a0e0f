/**
 * Compaction: when the context nears the model's window, the older part of the history is
 * replaced by a summary and the recent part is kept whole. Independent of how sessions are
 * stored: it works on `ContextItem`s and returns what the session layer records.
 */
import { terminalText } from "../core/terminal_text.ts";
import type { Provider } from "../llm/types.ts";
import { chooseCut, suffixTokens } from "./compaction_cut.ts";
import {
  checkSettings,
  type CompactionSettings,
  type ContextItem,
  type VoiceOf,
} from "./compaction_types.ts";
import { fallbackSummary } from "./fallback_summary.ts";
import { summarisedRequest, withLatestRequest } from "./latest_request.ts";
import {
  EMPTY_SECTION,
  isSummaryMessage,
  normaliseSummary,
  parseSummary,
  summaryMessage,
} from "./summary.ts";
import { buildSummaryRequest, SUMMARY_RESERVE_TOKENS } from "./summary_request.ts";
import { estimateMessageTokens } from "./tokens.ts";
import { trimToolOutputs } from "./trim.ts";

export { chooseCut, recentBudget } from "./compaction_cut.ts";
export {
  type CompactionSettings,
  type ContextItem,
  DEFAULT_COMPACTION,
  needsCompaction,
} from "./compaction_types.ts";
export { fallbackSummary } from "./fallback_summary.ts";
export {
  isSummaryMessage,
  normaliseSummary,
  SUMMARY_SECTIONS,
  summaryFromMessage,
  summaryMessage,
} from "./summary.ts";
export { buildSummaryRequest, SUMMARY_SYSTEM_PROMPT } from "./summary_request.ts";
export { trimToolOutputs } from "./trim.ts";

/** How long the summary call may take by default, in milliseconds. */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 60_000;

/** What a compaction did; the session layer records it as a compaction entry. */
export interface CompactionResult {
  /** The summary text, in the six sections (see SUMMARY_SECTIONS). */
  summary: string;
  /** Id of the first kept item, null when everything was summarised. */
  firstKeptId: string | null;
  /** Ids of the summarised items, in order. */
  summarised: string[];
  /** Estimated tokens of all the items. */
  tokensBefore: number;
  /** Estimated tokens of the summary message plus the kept items. */
  tokensAfter: number;
  /** True when the model summary failed and `summary` is the deterministic fallback. */
  fallback: boolean;
  /** Why the model summary failed; set exactly when `fallback` is true. */
  error?: string;
  /**
   * Images of the summarised messages, which the summary cannot carry: they are dropped, and
   * the summary's open items say so. Set when there were any.
   */
  imagesDropped?: number;
}

export interface CompactOptions {
  /** The model that writes the summary. */
  provider: Provider;
  model: string;
  settings: CompactionSettings;
  /** What the person asked the summary to focus on (`/compact <focus>`). */
  focus?: string;
  /** Cancels the summary call; the result is then the fallback. */
  signal?: AbortSignal;
  /** Longest wait for the summary, in milliseconds. Default 60,000. */
  timeoutMs?: number;
  /** The summary of an earlier compaction, when it is not among the items, to merge in. */
  previousSummary?: string;
  /**
   * Skip (return undefined) when the part to summarise, earlier summaries left out, is
   * estimated at fewer tokens than this: a summary of a few messages saves nothing and costs a
   * model call. Default 0. A part of earlier summaries alone is always skipped.
   */
  minSummarisedTokens?: number;
  /**
   * Tells the user-role messages the person did not write: they are no turns for the cut, and
   * the summary request tags them as what they are.
   */
  voiceOf?: VoiceOf;
}

/**
 * Compacts `items`: chooses the cut (chooseCut), trims the old tool outputs to
 * `toolOutputTrimChars` for the summary request, and asks the model for a summary in the six
 * sections (no tools offered). When the call fails, errors, times out, is cancelled, returns
 * no text or a summary whose every section is empty, the summary is the deterministic
 * `fallbackSummary` and `error` says why. Escape sequences and control characters (newline and
 * tab kept) are removed from either summary. When the cut summarises the person's latest
 * request, the summary ends with tern's copy of it, word for word (see `withLatestRequest`).
 * Returns undefined when there is nothing to summarise: cut 0, or only earlier summaries before
 * the cut (see `minSummarisedTokens`).
 *
 * It does not check the threshold: the caller does (needsCompaction) before an automatic
 * compaction and skips it for a manual one, which still keeps the recent part. Never throws,
 * except RangeError for settings out of range.
 */
export async function compact(
  items: ContextItem[],
  options: CompactOptions,
): Promise<CompactionResult | undefined> {
  const { settings } = options;
  checkSettings(settings);
  const cut = chooseCut(items, settings, { voiceOf: options.voiceOf });
  if (cut === 0) return undefined;
  const kept = suffixTokens(items);
  const old = items.slice(0, cut);
  // Earlier summaries alone are nothing new: summarising them again costs a model call, loses
  // more of the record, and before every round when the context stays over the threshold.
  const fresh = old.filter(({ message }) => !isSummaryMessage(message));
  const freshTokens = fresh.reduce((sum, { message }) => sum + estimateMessageTokens(message), 0);
  if (fresh.length === 0 || freshTokens < (options.minSummarisedTokens ?? 0)) return undefined;
  const request = buildSummaryRequest(trimToolOutputs(old, settings.toolOutputTrimChars), {
    model: options.model,
    contextWindow: settings.contextWindow,
    focus: options.focus,
    previousSummary: options.previousSummary,
    voiceOf: options.voiceOf,
  });
  const reply = await requestSummary(options.provider, request, {
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? DEFAULT_SUMMARY_TIMEOUT_MS,
    maxChars: summaryLimit(settings.contextWindow) * SUMMARY_CHARS_PER_TOKEN,
  });
  const count = (role: "user" | "tool") =>
    old.reduce(
      (sum, { message }) => sum + (message.role === role ? message.images?.length ?? 0 : 0),
      0,
    );
  const [attached, returned] = [count("user"), count("tool")];
  const imagesDropped = attached + returned;
  const withImages = (text: string) =>
    withDroppedToolImages(withDroppedImages(text, attached), returned);
  const fallback = () =>
    withImages(terminalText(fallbackSummary(old, options.previousSummary, options.voiceOf)));
  // A model's summary is kept, shown in transcripts and sent with every request: no escape
  // sequence or control character of a hostile reply goes with it.
  const text = "text" in reply ? normaliseSummary(terminalText(reply.text)) : "";
  let error = "error" in reply
    ? reply.error
    : isEmptySummary(text)
    ? "Summary model returned no summary: every section was empty"
    : undefined;
  let summary = error === undefined ? withImages(text) : fallback();
  if (error === undefined) {
    const instead = fallback();
    error = refusal(summary, instead, {
      limit: summaryLimit(settings.contextWindow),
      replaced: kept[0] - kept[cut],
    });
    if (error) summary = instead;
  }
  summary = withLatestRequest(
    summary,
    summarisedRequest(items, cut, options),
    // Half a summary's limit at most: the copy comes on top of the summary.
    summaryLimit(settings.contextWindow) / 2,
  );
  const result: CompactionResult = {
    summary,
    firstKeptId: items[cut]?.id ?? null,
    summarised: old.map((item) => item.id),
    tokensBefore: kept[0],
    tokensAfter: estimateMessageTokens(summaryMessage(summary)) + kept[cut],
    fallback: error !== undefined,
  };
  if (error !== undefined) result.error = error;
  if (imagesDropped > 0) result.imagesDropped = imagesDropped;
  return result;
}

/**
 * The most tokens a model's summary may have: a quarter of `contextWindow`, and no more than
 * the room the summary request leaves for its reply (SUMMARY_RESERVE_TOKENS). A longer one
 * would fill the window it is meant to free and be sent again with every request.
 */
export function summaryLimit(contextWindow: number): number {
  return Math.floor(Math.min(contextWindow / 4, SUMMARY_RESERVE_TOKENS));
}

/**
 * Why the model's `summary` must give way to the `fallback` summary: it is longer than `limit`
 * tokens, or it is no shorter than the `replaced` tokens of the old part (compaction would not
 * shrink the context) while the fallback is shorter. Undefined when it stays.
 */
function refusal(
  summary: string,
  fallback: string,
  options: { limit: number; replaced: number },
): string | undefined {
  const tokens = estimateMessageTokens(summaryMessage(summary));
  if (tokens > options.limit) {
    return `Summary model returned about ${tokens} tokens, over the limit of ` +
      `${options.limit} (a quarter of the context window, at most ${SUMMARY_RESERVE_TOKENS})`;
  }
  if (
    tokens >= options.replaced && estimateMessageTokens(summaryMessage(fallback)) < tokens
  ) {
    return `Summary model returned about ${tokens} tokens, no fewer than the ` +
      `${options.replaced} it replaces`;
  }
  return undefined;
}

/**
 * True when a normalised summary holds nothing: no text before its sections and every section
 * empty. Replacing the history with it would lose the person's goal and all the work.
 */
function isEmptySummary(summary: string): boolean {
  const { preamble, sections } = parseSummary(summary);
  return preamble === "" &&
    Object.values(sections).every((body) => body === undefined || body.trim() === EMPTY_SECTION);
}

/** `summary` with an open item saying that `count` images tools returned were dropped. */
function withDroppedToolImages(summary: string, count: number): string {
  if (count === 0) return summary;
  const item = `- ${count === 1 ? "An image" : `${count} images`} a tool returned (read of an ` +
    `image file) ${count === 1 ? "was" : "were"} dropped by compaction; read ` +
    `${count === 1 ? "it" : "them"} again if you need to see ${count === 1 ? "it" : "them"}.`;
  return appendOpenItem(summary, item);
}

/** `summary` with an open item saying that `count` images were dropped (none: unchanged). */
function withDroppedImages(summary: string, count: number): string {
  if (count === 0) return summary;
  const item = `- ${count === 1 ? "An image" : `${count} images`} the person attached earlier ` +
    `${count === 1 ? "was" : "were"} dropped by compaction; ask them to attach ` +
    `${count === 1 ? "it" : "them"} again if you need to see ${count === 1 ? "it" : "them"}.`;
  return appendOpenItem(summary, item);
}

/** `summary` with `item` under its open items (in place of an empty section's marker). */
function appendOpenItem(summary: string, item: string): string {
  const empty = `## Open items\n${EMPTY_SECTION}`;
  return summary.endsWith(empty)
    ? `${summary.slice(0, -EMPTY_SECTION.length)}${item}`
    : `${summary}\n${item}`;
}

/**
 * Characters per token of the summary limit past which a reply is not read further: more than
 * any text takes but runs of one character, so a reply that long is over the limit anyway.
 */
const SUMMARY_CHARS_PER_TOKEN = 32;

/**
 * Streams the summary; every failure comes back as `{ error }`. A reply past `maxChars` is not
 * read further: a server streaming without end would otherwise hold the turn until the
 * timeout and grow the text to the wire's cap.
 */
async function requestSummary(
  provider: Provider,
  request: Parameters<Provider["stream"]>[0],
  options: { signal?: AbortSignal; timeoutMs: number; maxChars: number },
): Promise<{ text: string } | { error: string }> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const forwardAbort = () => controller.abort();
  if (options.signal?.aborted) controller.abort();
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  const failure = (detail: string) => {
    if (timedOut) return { error: `Summary model call timed out after ${options.timeoutMs} ms` };
    if (options.signal?.aborted) return { error: "Summary model call was cancelled" };
    return { error: `Summary model call failed: ${detail}` };
  };
  const tooLong = () => {
    controller.abort();
    return { error: `Summary model returned more than ${options.maxChars} characters` };
  };
  let streamed = "";
  try {
    for await (const event of provider.stream(request, controller.signal)) {
      if (event.type === "text_delta") {
        streamed += event.text;
        if (streamed.length > options.maxChars) return tooLong();
      } else if (event.type === "retry") {
        streamed = ""; // the attempt starts over
      } else if (event.type === "error") {
        return failure(event.message);
      } else if (event.type === "done") {
        const text = event.message.content !== "" ? event.message.content : streamed;
        if (text.length > options.maxChars) return tooLong();
        return text.trim() === "" ? { error: "Summary model returned no text" } : { text };
      }
    }
    return failure("the stream ended without a result");
  } catch (error) {
    // Providers must not throw; a broken one still must not stop the turn.
    return failure(error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", forwardAbort);
  }
}
