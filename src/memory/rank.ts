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
  const terms = [...new Set(words(query))];
  if (limit <= 0 || terms.length === 0 || facts.length === 0) return [];
  const docs = facts.map((fact) => words(fact.text));
  const average = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length || 1;
  const frequency = new Map<string, number>();
  for (const doc of docs) {
    for (const term of new Set(doc)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  }
  const ranked: Array<RankedFact & { index: number }> = [];
  docs.forEach((doc, index) => {
    let score = 0;
    const matched: string[] = [];
    for (const term of terms) {
      const tf = doc.filter((word) => word === term).length;
      if (tf === 0) continue;
      const df = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * doc.length / average));
      matched.push(term);
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

/**
 * The section sent with a message: the chosen facts, oldest first (the later line is the newer
 * word where two disagree); undefined when none was chosen.
 */
export function rankedMemorySection(chosen: readonly RankedFact[]): string | undefined {
  if (chosen.length === 0) return undefined;
  const lines = [...chosen]
    .sort((a, b) => a.fact.created.localeCompare(b.fact.created))
    // What the person saved, as `tern memory list` shows it: nothing that draws as nothing,
    // one line (a line break would start a line of the message that is not a fact's).
    .map(({ fact }) => `- ${withoutInvisible(fact.text).replace(/[\s\p{Cc}]+/gu, " ").trim()}`);
  return [
    "[Remembered facts that may bear on this message (saved by the person in earlier sessions;",
    "a later line wins where two disagree):]",
    ...lines,
  ].join("\n");
}
