/**
 * Cheap token estimates for the context budget, calibrated against OpenAI's o200k_base.
 *
 * No tokenizer is loaded. `estimateTokens()` makes one pass over the text and counts what
 * o200k_base's pre-tokenizer splits it into (letter runs, digit groups, punctuation runs, space
 * and line-break runs, CJK runs; see `_token_classes.ts`), plus a few signs that a run takes
 * more than one token (its length, no vowel, capitals then lower case, accents, a run of mixed
 * punctuation), and sums the counts times fitted coefficients.
 *
 * The coefficients come from `bench/token_fit.ts`: bounded least squares on the relative error
 * of 227 chunks (about 600 characters each) of 43 samples of code, prose, JSON, CJK text and
 * tool output in tests/fixtures/tokens/ (194 KB), 10 more samples held out. Measured against
 * gpt-tokenizer's o200k_base (bench/results/tokens.md): every one of the 53 samples within
 * ±6.1% (root mean square 2.9%), the held-out ones within ±5.7%, each category's total within
 * ±1.5%. Text unlike all of the corpus can be off by more: leaving each sample out of the fit
 * in turn, the worst ones (base64 hashes, minified JSON, `ls -l`, French) were off by 11–13%.
 * Speed: hundreds of MB/s, about a hundred times gpt-tokenizer's `countTokens()`.
 */
import type { Message } from "../core/messages.ts";
import type { ToolSpec } from "../core/tool_spec.ts";
import { countTokenClasses, TOKEN_CLASSES, type TokenClassCounts } from "./_token_classes.ts";

/** Tokens per count, fitted by bench/token_fit.ts; see the module doc. */
const COEFFICIENTS: Readonly<Record<keyof TokenClassCounts, number>> = {
  words: 1.005,
  longWordChars: 0.124,
  consonantChars: 0.344,
  mixedWords: 2.169,
  punctWordChars: 0.09,
  digitGroups: 1.222,
  punctRuns: 0.979,
  punctLongChars: 0.928,
  jsonPunctChars: 0.148,
  repeatChars: 0.082,
  spaceRuns: 0.951,
  newlines: 1.414,
  blankChars: 0.063,
  han: 0.579,
  kana: 0.617,
  hangul: 0.35,
  cjkRuns: 0.963,
  cjkPunct: 1.39,
  latinWords: 1.176,
  otherLetters: 0.071,
  otherSymbols: 0.5,
};

/**
 * Tokens a message costs beyond its text: the role and the separators of the chat format.
 * OpenAI documents 3 per message for its chat models ("every message follows
 * <|start|>{role/name}\n{content}<|end|>\n"); 4 leaves room for the name of a tool message.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Tokens a request costs once, whatever its messages: the priming of the reply. */
export const REQUEST_OVERHEAD_TOKENS = 3;

/**
 * Estimated o200k_base tokens of `text`: 0 for the empty string, never negative, a whole
 * number. Within ±10% of the real count on the test corpus (see the module doc for the
 * measured error); one pass, no tokenizer, hundreds of MB/s. Never throws.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  const counts = countTokenClasses(text);
  let sum = 0;
  for (const name of TOKEN_CLASSES) sum += COEFFICIENTS[name] * counts[name];
  return Math.max(1, Math.round(sum));
}

/**
 * Estimated tokens of one message: its content plus {@linkcode MESSAGE_OVERHEAD_TOKENS}, the
 * name and arguments of each tool call plus the same overhead again (the chat format renders a
 * call as a message of its own, addressed to the tool), and the tool's name for a tool result.
 * Call ids are not counted: they are not rendered to the model. Never throws.
 */
export function estimateMessageTokens(message: Message): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content);
  if (message.role === "assistant") {
    for (const call of message.toolCalls ?? []) {
      tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(call.name) +
        estimateTokens(call.arguments);
    }
  } else if (message.role === "tool") {
    tokens += estimateTokens(message.name);
  }
  return tokens;
}

/**
 * Estimated tokens of a whole request: every message, every tool spec as the JSON sent to the
 * model, and {@linkcode REQUEST_OVERHEAD_TOKENS}. Never throws.
 */
export function estimateRequestTokens(messages: Message[], tools: ToolSpec[] = []): number {
  let tokens = REQUEST_OVERHEAD_TOKENS;
  for (const message of messages) tokens += estimateMessageTokens(message);
  for (const tool of tools) tokens += estimateTokens(JSON.stringify(tool));
  return tokens;
}
