/**
 * Cheap token estimates for the context budget, calibrated against OpenAI's o200k_base.
 *
 * No tokenizer is loaded. `estimateTokens()` makes one pass over the text and counts what
 * o200k_base's pre-tokenizer splits it into (letter runs, digit groups, punctuation runs, space
 * and line-break runs, CJK runs; see `_token_classes.ts`), plus a few signs that a run takes
 * more than one token (its length, no vowel, capitals then lower case, accents, mixed
 * punctuation), and sums the counts times fitted coefficients.
 *
 * The coefficients come from `bench/token_fit.ts`: least squares on the relative error of 232
 * chunks of about 600 characters cut from 44 samples of code, prose, JSON, CJK text and tool
 * output in tests/fixtures/tokens/, each coefficient ≥ 0 and three bounded by how o200k_base
 * treats long runs and rare symbols; 10 more samples are held out. (The fit predates the
 * replacement of 11 samples by permissively licensed ones; refitting on the current corpus makes
 * the worst sample worse, 9.2%, so the coefficients were kept.) Measured with gpt-tokenizer's
 * o200k_base (bench/results/tokens.md): all 54 samples within ±8.4% (root mean square 3.2%),
 * the held-out ones within ±5.3%, each category's total within ±1.4%, the whole corpus +0.2%.
 * Text unlike the corpus can be off by more: fitted without it, each sample is within ±15%
 * (Chinese man pages in either script, base64 hashes in deno.lock and French are the worst:
 * o200k_base spends about 0.88 tokens on a Traditional Chinese character and 0.70 on a
 * Simplified one, which the estimate cannot tell apart); hex, UUIDs and columns of numbers come
 * out 10–14% high, emoji 10% low, Greek 30% low before GREEK_LETTER, long runs of one
 * character several times high. Speed: several times gpt-tokenizer's `countTokens()` (`bench/results/tokens.md`).
 * A second, simpler pass (`unmergedTokens()`, about a third more time) adds what the fit
 * misses on text o200k_base cannot merge: random letters, rare CJK, private-use characters.
 */
import type { Message } from "../core/messages.ts";
import type { ToolSpec } from "../core/tool_spec.ts";
import { knownSpecTokens } from "../core/spec_tokens.ts";
import { isSplitCjk } from "./_cjk_single_tokens.ts";
import { countTokenClasses, type TokenClassCounts } from "./_token_classes.ts";

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

const NAMES = Object.keys(COEFFICIENTS) as (keyof TokenClassCounts)[];

/**
 * Tokens a message costs beyond its text: the role and the separators of the chat format.
 * OpenAI's token-counting guide uses 3 per message ("every message follows
 * <|start|>{role/name}\n{content}<|end|>\n") and 1 more for a name.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Tokens counted for one image in a user message: about what Anthropic charges for an image of
 * its largest unscaled size (width × height / 750 for 1,092 × 1,092), above OpenAI's high-detail
 * cost for a 1,024-pixel square (765). Images are sent as they are, so this is an upper bound.
 */
export const IMAGE_TOKENS = 1_600;

/** Tokens a request costs once: the priming of the reply (`<|start|>assistant<|message|>`). */
export const REQUEST_OVERHEAD_TOKENS = 3;

/**
 * Estimated o200k_base tokens of `text`: 0 for the empty string, never negative, a whole
 * number. Within ±10% of the real count on every sample of the test corpus (see the module doc
 * for the measured error); one pass, no tokenizer. Never throws.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  const counts = countTokenClasses(text);
  let sum = 0;
  for (const name of NAMES) sum += COEFFICIENTS[name] * counts[name];
  return Math.max(1, Math.round(sum + unmergedTokens(text)));
}

/** Tokens more than the fit counts for an ideograph o200k_base splits (2.0 on average). */
const SPLIT_HAN = 1.4;
/** Tokens more than the fit counts for a Hangul syllable o200k_base splits (2.3 on average). */
const SPLIT_HANGUL = 1.9;
/** Letters in one run, longer than words are, past which each one counts more. */
const LONG_RUN = 24;
/**
 * Tokens more than the fit counts for a Greek or Cyrillic letter that is the third or later
 * consonant in a row, for those past NATURAL_CLUSTERS of the Greek and Cyrillic letters: random
 * words in these scripts (o200k_base spends 0.7–0.9 tokens a letter on them, the fit a quarter
 * of that) have them at a fifth to a third of their letters, Russian prose at 1–3%.
 */
const CLUSTER_TOKENS = 2.5;
const NATURAL_CLUSTERS = 0.05;
/** Tokens more than the fit counts for a Greek letter: o200k_base merges Greek less than Cyrillic. */
const GREEK_LETTER = 0.13;
/**
 * Tokens more than the fit counts for a Greek or Cyrillic capital after a small letter of the
 * same run: o200k_base starts a new word there (the fit counts such letters as small ones).
 */
const CASE_SPLIT = 1;
/** 1 for the Greek and Cyrillic vowels, indexed from U+0370. */
const OTHER_VOWEL = new Uint8Array(0x530 - 0x370);
for (const vowel of "αεηιουωάέήίόύώϊϋΐΰΑΕΗΙΟΥΩΆΈΉΊΌΎΏаеёиоуыэюяіїєАЕЁИОУЫЭЮЯІЇЄ") {
  OTHER_VOWEL[vowel.charCodeAt(0) - 0x370] = 1;
}

/**
 * Tokens the fitted estimate misses on text o200k_base cannot merge, which a file or a tool's
 * output may hold by chance or to overflow the window, where the fit alone says a sixth to a
 * third of the real count: letters past LONG_RUN in one run (random ones cost half a token
 * each in ASCII, a token accented, the fit about 0.15; a repeated ASCII letter merges and does
 * not count), random Greek and Cyrillic words (told by their runs of consonants, see
 * CLUSTER_TOKENS, and capitals inside a word), Greek letters, CJK ideographs and Hangul syllables o200k_base splits
 * (`isSplitCjk`), code points beyond the Basic Multilingual Plane but emoji (about four tokens
 * each) and private-use characters (three). On the corpus it adds under 2% (split ideographs).
 */
function unmergedTokens(text: string): number {
  let longAscii = 0, longOther = 0, astral = 0, privateUse = 0, han = 0, hangul = 0;
  let run = 0, consonants = 0, greekOrCyrillic = 0, greek = 0, clustered = 0, splits = 0;
  let small = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      consonants = 0;
      if ((((c | 32) - 97) >>> 0) < 26) {
        // a letter repeated (`aaaa`) merges well: only changes count
        if (++run > LONG_RUN && c !== text.charCodeAt(i - 1)) longAscii++;
      } else run = 0;
    } else if ((c >= 0xc0 && c <= 0x24f) || (c >= 0x370 && c <= 0x52f)) {
      // Latin, Greek and Cyrillic letters, which the estimate counts as one run with ASCII ones
      if (++run > LONG_RUN) longOther++;
      if (c < 0x370) consonants = 0;
      else {
        greekOrCyrillic++;
        if (c < 0x400) greek++;
        if (OTHER_VOWEL[c - 0x370] === 1) consonants = 0;
        else if (++consonants >= 3 && run <= LONG_RUN) clustered++;
        const capital = (c >= 0x391 && c <= 0x3a9) || (c >= 0x400 && c <= 0x42f);
        if (capital && small && run > 1) splits++;
        small = !capital;
      }
    } else {
      run = 0;
      consonants = 0;
      if (c >= 0x4e00 && c <= 0xd7a3) {
        if (isSplitCjk(c)) c >= 0xac00 ? hangul++ : han++;
      } else if (c >= 0xd800 && c <= 0xdbff) {
        const point = text.codePointAt(i)!;
        // Emoji (U+1F000..U+1FAFF) are merged well; the rest of the planes beyond are not.
        if (point > 0xffff && (point < 0x1f000 || point > 0x1faff)) astral++;
      } else if (c >= 0xe000 && c <= 0xf8ff) privateUse++;
    }
  }
  const randomLetters = Math.max(0, clustered - NATURAL_CLUSTERS * greekOrCyrillic);
  return 0.45 * longAscii + 0.9 * longOther + 3 * astral + 2.5 * privateUse +
    SPLIT_HAN * han + SPLIT_HANGUL * hangul + CLUSTER_TOKENS * randomLetters +
    GREEK_LETTER * greek + CASE_SPLIT * splits;
}

/**
 * Estimated tokens of one message: its content plus {@linkcode MESSAGE_OVERHEAD_TOKENS}, the
 * name and arguments of each tool call plus the same overhead again (the chat format renders a
 * call as a message of its own, addressed to the tool), and the tool's name for a tool result.
 * Call ids are not counted: they are not rendered to the model. Each image of a user message
 * or a tool result counts {@linkcode IMAGE_TOKENS}. Never throws.
 */
export function estimateMessageTokens(message: Message): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTokens(message.content);
  if (message.role === "user") {
    tokens += (message.images?.length ?? 0) * IMAGE_TOKENS;
  } else if (message.role === "assistant") {
    for (const call of message.toolCalls ?? []) {
      tokens += MESSAGE_OVERHEAD_TOKENS + estimateTokens(call.name) +
        estimateTokens(call.arguments);
    }
  } else if (message.role === "tool") {
    tokens += estimateTokens(message.name) + (message.images?.length ?? 0) * IMAGE_TOKENS;
  }
  return tokens;
}

/**
 * Estimated tokens of a whole request: every message, every tool spec as the JSON sent to the
 * model, and {@linkcode REQUEST_OVERHEAD_TOKENS}. The reasoning of the assistant messages after
 * the last user message counts too: it is sent back during a tool loop, and the server counts
 * it there (Anthropic drops earlier turns' thinking), so a long task's rounds of reasoning
 * would otherwise fill the window unseen. Never throws. With `cache`, each message (by
 * identity) and each tool spec (by its `parameters` object) is estimated once: for a caller
 * that estimates a growing conversation before every round. A spec whose estimate is known
 * ahead (`core/spec_tokens.ts`: the built-in tools') is not estimated again.
 */
export function estimateRequestTokens(
  messages: Message[],
  tools: ToolSpec[] = [],
  cache?: WeakMap<object, number>,
): number {
  const cost = (key: object, estimate: () => number): number => {
    if (cache === undefined) return estimate();
    let tokens = cache.get(key);
    if (tokens === undefined) cache.set(key, tokens = estimate());
    return tokens;
  };
  let tokens = REQUEST_OVERHEAD_TOKENS;
  for (const message of messages) tokens += cost(message, () => estimateMessageTokens(message));
  for (let i = messages.length - 1; i >= 0 && messages[i].role !== "user"; i--) {
    const message = messages[i];
    if (message.role !== "assistant") continue;
    for (const part of message.thinking ?? []) {
      // Thinking inside the content ("content") is never sent back.
      if (part.field !== "content") tokens += cost(part, () => estimateTokens(part.text));
    }
  }
  for (const tool of tools) {
    tokens += cost(
      tool.parameters,
      () => knownSpecTokens(tool) ?? estimateTokens(JSON.stringify(tool)),
    );
  }
  return tokens;
}
