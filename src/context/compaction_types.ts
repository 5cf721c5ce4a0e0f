/** Shapes shared by the compaction modules. */
import type { Message } from "../core/messages.ts";

/** One message of the context, tied to the session entry it came from. */
export interface ContextItem {
  /** The session entry id of the message. */
  id: string;
  message: Message;
}

/** When and how much to compact. Token counts are estimates (see tokens.ts). */
export interface CompactionSettings {
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Fraction of the window at which compaction starts; default 0.8. */
  threshold: number;
  /** Tokens at the end of the history kept whole (capped, see chooseCut); default 20,000. */
  keepRecentTokens: number;
  /** User turns at the end of the history kept whole (within a budget, see chooseCut); default 2. */
  minRecentUserTurns: number;
  /** Tool outputs in the summarised part are cut to this many characters; default 8,000. */
  toolOutputTrimChars: number;
}

/** The defaults of every setting but the window, which comes from the model. */
export const DEFAULT_COMPACTION: Omit<CompactionSettings, "contextWindow"> = {
  threshold: 0.8,
  keepRecentTokens: 20_000,
  minRecentUserTurns: 2,
  toolOutputTrimChars: 8_000,
};

/**
 * True when a request of `tokens` estimated tokens (system prompt + items + tool specs) is at
 * or over `threshold × contextWindow`.
 */
export function needsCompaction(tokens: number, settings: CompactionSettings): boolean {
  return tokens >= settings.threshold * settings.contextWindow;
}

/** Throws RangeError when a setting is out of range. */
export function checkSettings(settings: CompactionSettings): void {
  const bad = (name: string, value: number, want: string) =>
    new RangeError(`Cannot use compaction setting "${name}" = ${value}: ${want}`);
  const { contextWindow, threshold, keepRecentTokens, minRecentUserTurns, toolOutputTrimChars } =
    settings;
  if (!(contextWindow > 0)) throw bad("contextWindow", contextWindow, "must be positive");
  if (!(threshold > 0 && threshold <= 1)) {
    throw bad("threshold", threshold, "must be in (0, 1]");
  }
  if (!(keepRecentTokens >= 0)) throw bad("keepRecentTokens", keepRecentTokens, "must be >= 0");
  if (!(Number.isInteger(minRecentUserTurns) && minRecentUserTurns >= 0)) {
    throw bad("minRecentUserTurns", minRecentUserTurns, "must be a whole number >= 0");
  }
  if (!(toolOutputTrimChars >= 200)) {
    throw bad("toolOutputTrimChars", toolOutputTrimChars, "must be >= 200");
  }
}

/**
 * What a user-role message with `content` is when the person did not write it (`"a subagent's
 * result"`: tern gives the model such messages as user messages), or undefined for the person's.
 */
export type VoiceOf = (content: string) => string | undefined;
