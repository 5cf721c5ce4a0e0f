/**
 * What a compaction would do, before it does it: the same cut `compact()` makes (chooseCut),
 * counted on both sides. No I/O, no model call.
 */
import { chooseCut, suffixTokens, userTurnIndices } from "./compaction_cut.ts";
import type { CompactionSettings, ContextItem, VoiceOf } from "./compaction_types.ts";
import { isSummaryMessage } from "./summary.ts";

/** One side of the cut. */
export interface PreviewSide {
  /** Context items (messages, summaries). */
  entries: number;
  /** User messages among them that are the person's turns (not summaries, see `voiceOf`). */
  turns: number;
  /** Estimated tokens. */
  tokens: number;
}

export interface CompactionPreview {
  /** `items[0..cut)` would be summarised; 0 when there is nothing to compact. */
  cut: number;
  summarised: PreviewSide;
  kept: PreviewSide;
}

/**
 * Where `compact(items, { settings, voiceOf })` would cut, and how much lies on each side. Give
 * the same `voiceOf` as the compaction, or the preview may count a subagent's result as a turn.
 */
export function previewCompaction(
  items: ContextItem[],
  settings: CompactionSettings,
  options: { voiceOf?: VoiceOf } = {},
): CompactionPreview {
  const chosen = chooseCut(items, settings, options);
  // compact() summarises no earlier summaries alone: nothing to compact then either.
  const fresh = items.slice(0, chosen).some(({ message }) => !isSummaryMessage(message));
  const cut = fresh ? chosen : 0;
  const tokens = suffixTokens(items);
  const turns = userTurnIndices(items, options.voiceOf);
  const turnsBefore = turns.filter((i) => i < cut).length;
  return {
    cut,
    summarised: { entries: cut, turns: turnsBefore, tokens: tokens[0] - tokens[cut] },
    kept: { entries: items.length - cut, turns: turns.length - turnsBefore, tokens: tokens[cut] },
  };
}

/** The preview in words, one line per side. */
export function previewLines(preview: CompactionPreview): string[] {
  const side = (s: PreviewSide) =>
    `${s.turns} turn${s.turns === 1 ? "" : "s"}, ${s.entries} entr${
      s.entries === 1 ? "y" : "ies"
    }, ~${s.tokens} tokens`;
  return [
    `summarise: ${side(preview.summarised)}`,
    `keep:      ${side(preview.kept)}`,
  ];
}
