/**
 * Which remembered facts go with a message: BM25 over the facts (each fact a document, the
 * message the query), the best {@linkcode DEFAULT_MEMORY_FACTS} by default. A fact that shares
 * no word with the message is never chosen. Pure functions: `tern context` shows the same
 * choice, with each fact's score and the words that matched.
 */
import { withoutInvisible } from "../core/invisible_text.ts";
import type { Fact } from "./facts.ts";

/** Facts sent with a message by default (the `memoryFacts` setting). */
export const DEFAULT_MEMORY_FACTS = 5;
/** The most characters of fact lines sent with one message; the least relevant are left out. */
export const MAX_SECTION_CHARS = 8_000;
/** BM25's term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
/** Words too common to tell facts apart. */
const STOP = new Set(
  ("a an and are as at be by do for from has have i in is it its of on or so that the this " +
    "to was we were will with you your use used using").split(" "),
);

/** One chosen fact and why. */
export interface RankedFact {
  fact: Fact;
  /** BM25 score, rounded to 0.01. */
  score: number;
  /** The message's words found in the fact. */
  terms: string[];
}

/**
 * The words of `text` as BM25 counts them: lower case, letters and digits, identifiers split
 * (`parseArgs`, `parse_args` → `parse`, `args`), stop words and 1-character words dropped.
 */
export function words(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 && !STOP.has(word));
}

/**
 * The `limit` facts most relevant to `query`, best first (ties: the newer first); none when
 * `limit` is 0 or no fact shares a word with the query.
 */
export function rankFacts(facts: readonly Fact[], query: string, limit: number): RankedFact[] {
  // Each query word with its place in the query, which orders a fact's matched words.
  const terms = new Map([...new Set(words(query))].map((term, place) => [term, place]));
  if (limit <= 0 || terms.size === 0 || facts.length === 0) return [];
  const docs = facts.map((fact) => words(fact.text));
  const average = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length || 1;
  // Counted once per fact: a message's every word looked for in every fact was quadratic
  // (a pasted log of 20,000 words against 500 long facts held the turn 3 s).
  const counts = docs.map(countWords);
  const frequency = new Map<string, number>();
  for (const count of counts) {
    for (const term of count.keys()) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  }
  const ranked: Array<RankedFact & { index: number }> = [];
  docs.forEach((doc, index) => {
    let score = 0;
    const matched = [...counts[index].keys()].filter((term) => terms.has(term))
      .sort((a, b) => terms.get(a)! - terms.get(b)!);
    for (const term of matched) {
      const tf = counts[index].get(term)!;
      const df = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * doc.length / average));
    }
    if (score > 0) {
      ranked.push({
        fact: facts[index],
        score: Math.round(score * 100) / 100,
        terms: matched,
        index,
      });
    }
  });
  ranked.sort((a, b) =>
    b.score - a.score || b.fact.created.localeCompare(a.fact.created) || b.index - a.index
  );
  return ranked.slice(0, limit).map(({ fact, score, terms }) => ({ fact, score, terms }));
}

/** How many times each word occurs in `doc`. */
function countWords(doc: readonly string[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const word of doc) count.set(word, (count.get(word) ?? 0) + 1);
  return count;
}

/**
 * The section sent with a message: the chosen facts, oldest first (the later line is the newer
 * word where two disagree), the most relevant of them that fit in {@linkcode MAX_SECTION_CHARS}
 * (a last line counts the rest); undefined when none was chosen.
 */
export function rankedMemorySection(chosen: readonly RankedFact[]): string | undefined {
  if (chosen.length === 0) return undefined;
  // The best first while they fit: a project may ask for 100 facts (`memoryFacts`), and 100 of
  // 2,000 characters would ride with every message.
  const kept: { created: string; line: string }[] = [];
  let chars = 0;
  for (const { fact } of chosen) {
    // What the person saved, as `tern memory list` shows it: nothing that draws as nothing,
    // one line (a line break would start a line of the message that is not a fact's).
    const line = `- ${withoutInvisible(fact.text).replace(/[\s\p{Cc}]+/gu, " ").trim()}`;
    if (chars + line.length + 1 > MAX_SECTION_CHARS) break;
    kept.push({ created: fact.created, line });
    chars += line.length + 1;
  }
  const left = chosen.length - kept.length;
  return [
    "[Remembered facts that may bear on this message (saved by the person in earlier sessions;",
    "a later line wins where two disagree):]",
    ...kept.sort((a, b) => a.created.localeCompare(b.created)).map((entry) => entry.line),
    ...(left > 0
      ? [
        `[${left} less relevant ${left === 1 ? "fact was" : "facts were"} left out: ` +
        `the facts sent with a message are kept under ${
          MAX_SECTION_CHARS.toLocaleString("en-US")
        } characters]`,
      ]
      : []),
  ].join("\n");
}
