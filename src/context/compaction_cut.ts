/** Where to cut the history for compaction: the planner part of the algorithm, no I/O. */
import type { CompactionSettings, ContextItem, VoiceOf } from "./compaction_types.ts";
import { isSummaryMessage } from "./summary.ts";
import { estimateMessageTokens } from "./tokens.ts";

/**
 * The most the kept part may take to still leave room after compaction: half the compaction
 * budget, `threshold × contextWindow / 2` tokens. It caps `keepRecentTokens` (so a small window
 * with the default 20,000 can still be compacted) and bounds the user-turn rule.
 */
export function recentBudget(settings: CompactionSettings): number {
  return settings.threshold * settings.contextWindow / 2;
}

/**
 * Where to cut: `items[0..cut)` are summarised, `items[cut..]` kept whole. Returns 0 when there
 * is nothing to compact.
 *
 * A cut is allowed only at an API-round boundary: the first kept item is never a tool message,
 * and no assistant message is separated from a tool result answering one of its calls. Among
 * allowed cuts the latest is chosen that keeps
 * - at least `min(keepRecentTokens, recentBudget(settings))` tokens (estimated, counted from
 *   the end), and
 * - the last `minRecentUserTurns` user messages the person wrote (a summary does not count as a
 *   turn, nor any message `options.voiceOf` says someone else wrote: a subagent's result, a
 *   hook's output), so such messages never push the person's latest request out.
 *
 * The user-turn rule gives way, one turn at a time, when keeping those turns whole would keep
 * more than `recentBudget(settings)` tokens: otherwise a long single-request task (one user
 * message, hundreds of tool rounds) could never be compacted. A history under the token rule's
 * count is all "recent" and the cut is 0. That rule gives way only when the part it keeps is
 * itself over `recentBudget(settings)` (a huge message or tool result in it): the cut is then
 * the earliest allowed one that keeps no more than the budget, the last message always kept,
 * or no compaction could bring such a context under the window.
 */
export function chooseCut(
  items: ContextItem[],
  settings: CompactionSettings,
  options: { voiceOf?: VoiceOf } = {},
): number {
  const n = items.length;
  const kept = suffixTokens(items);
  const allowed = roundBoundaries(items);
  const users = userTurnIndices(items, options.voiceOf);
  const budget = recentBudget(settings);
  const keepTokens = Math.min(settings.keepRecentTokens, budget);
  const cutFor = (turns: number): number => {
    const need = Math.min(turns, users.length);
    const limit = need === 0 ? n : users[users.length - need];
    for (let j = limit; j > 0; j--) {
      if (allowed[j] && kept[j] >= keepTokens) return j;
    }
    return 0;
  };
  for (let turns = settings.minRecentUserTurns; turns > 0; turns--) {
    const cut = cutFor(turns);
    if (kept[cut] <= budget) return cut;
  }
  const cut = cutFor(0);
  if (kept[cut] <= budget) return cut;
  // One message or tool result among the recent ones is over the budget by itself: keeping it
  // would leave the context as full after every compaction. Keep the most that fits instead.
  // The last message stays: a request too large alone is the person's to shorten.
  for (let j = cut + 1; j < n; j++) {
    if (allowed[j] && kept[j] <= budget) return j;
  }
  return cut;
}

/** `result[j]` = estimated tokens of `items[j..]`; `result[n]` = 0. */
export function suffixTokens(items: ContextItem[]): number[] {
  const sums = new Array<number>(items.length + 1).fill(0);
  for (let i = items.length - 1; i >= 0; i--) {
    sums[i] = sums[i + 1] + estimateMessageTokens(items[i].message);
  }
  return sums;
}

/**
 * `result[j]` (j in 0..n) is true when the history may be cut before `items[j]`: it is not a
 * tool message and no tool call made before j is answered at or after j. Cutting at 0 (keep
 * everything) is always allowed.
 */
export function roundBoundaries(items: ContextItem[]): boolean[] {
  const n = items.length;
  // blocked[j] > 0 when some call/result span covers the gap before j.
  const delta = new Array<number>(n + 2).fill(0);
  const callAt = new Map<string, number>();
  items.forEach(({ message }, i) => {
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) callAt.set(call.id, i);
    } else if (message.role === "tool") {
      const from = callAt.get(message.toolCallId);
      if (from !== undefined && from < i) {
        delta[from + 1]++;
        delta[i + 1]--;
      }
    }
  });
  const allowed = new Array<boolean>(n + 1);
  let open = 0;
  for (let j = 0; j <= n; j++) {
    open += delta[j];
    allowed[j] = j === 0 || (open === 0 && (j === n || items[j].message.role !== "tool"));
  }
  return allowed;
}

/**
 * Indices of the user messages that are the person's turns, in order: not compaction summaries,
 * nor messages `voiceOf` says someone else wrote.
 */
export function userTurnIndices(items: ContextItem[], voiceOf?: VoiceOf): number[] {
  const indices: number[] = [];
  items.forEach(({ message }, i) => {
    if (
      message.role === "user" && !isSummaryMessage(message) &&
      voiceOf?.(message.content) === undefined
    ) indices.push(i);
  });
  return indices;
}
