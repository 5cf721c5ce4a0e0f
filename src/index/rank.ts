/**
 * The hybrid ranking of the code index: full-text relevance (BM25), embedding similarity, and
 * boosts for a chunk whose symbol is the identifier asked for and for the kinds of chunk that
 * usually answer a question. A pure function over candidates the store gathered.
 */
import type { Chunk, ChunkKind } from "./types.ts";
import { identifierKey, queryWords, splitWords } from "./words.ts";

/** The weights of the hybrid score (config's `searchWeights` overrides any of them). */
export interface RankWeights {
  /** Times the candidate's BM25 score divided by the best BM25 score among the candidates (0..1). */
  bm25: number;
  /** Times the cosine similarity of query and chunk embeddings (clamped at 0). */
  vector: number;
  /** Added when the symbol (or its last `.` part) is the query's identifier (`parseArgs` = `parse_args`). */
  exactSymbol: number;
  /** Times the share of the query's words found among the symbol's words. */
  symbolWords: number;
  /** A chunk that matched no query word is a candidate only when its cosine is at least this. */
  vectorFloor: number;
  /** Added by the chunk's kind: declarations before files and line windows. */
  kind: Record<ChunkKind, number>;
}

/** The default weights: text relevance first, then meaning, then the name and kind boosts. */
export const DEFAULT_RANK_WEIGHTS: Readonly<RankWeights> = Object.freeze({
  bm25: 1,
  vector: 0.6,
  exactSymbol: 1,
  symbolWords: 0.4,
  vectorFloor: 0.15,
  kind: Object.freeze({
    FUNCTION: 0.1,
    METHOD: 0.1,
    CLASS: 0.1,
    INTERFACE: 0.1,
    FILE: 0,
    WINDOW: 0,
  }),
});

/** A chunk the store found, with its raw scores. */
export interface Candidate {
  chunk: Chunk;
  /** SQLite FTS5 `bm25()`: lower is better, 0 or undefined when the text did not match. */
  bm25?: number;
  /** Cosine similarity of the query's and the chunk's embeddings. */
  cosine: number;
}

/**
 * Each signal's part of a score; `score` is their sum:
 * `bm25 · (bm25 / best bm25) + vector · max(0, cosine) + exactSymbol · [symbol is the query's
 * identifier] + symbolWords · (share of query words in the symbol) + kind[chunk kind]`.
 */
export interface ScoreParts {
  bm25: number;
  vector: number;
  /** exactSymbol plus symbolWords: the name boost. */
  name: number;
  kind: number;
}

/** A ranked result. */
export interface Hit {
  chunk: Chunk;
  score: number;
  /** What each signal added to `score` (rank() always sets it). */
  parts?: ScoreParts;
}

/** The default weights with those `partial` sets (config's `searchWeights`) in their place. */
export function withWeights(
  partial: Partial<Omit<RankWeights, "kind">> & { kind?: Partial<RankWeights["kind"]> } = {},
): RankWeights {
  return {
    ...DEFAULT_RANK_WEIGHTS,
    ...partial,
    kind: { ...DEFAULT_RANK_WEIGHTS.kind, ...partial.kind },
  };
}

/**
 * `candidates` scored and ordered best first (ties by path, then start line), cut to `limit`.
 * Natural-language and identifier queries both work: the query is split into words like the
 * index (`parseArgs` → `parse args`).
 */
export function rank(
  query: string,
  candidates: Candidate[],
  options: { limit: number; weights?: RankWeights },
): Hit[] {
  const weights = options.weights ?? DEFAULT_RANK_WEIGHTS;
  const words = queryWords(query);
  const key = identifierKey(query);
  const best = Math.max(0, ...candidates.map((candidate) => -(candidate.bm25 ?? 0)));
  const hits = candidates.map(({ chunk, bm25, cosine }) => {
    const text = best > 0 ? -(bm25 ?? 0) / best : 0;
    const last = chunk.symbol.split(".").pop() ?? chunk.symbol;
    const exact = key !== "" &&
      (identifierKey(last) === key || identifierKey(chunk.symbol) === key);
    const symbolWords = new Set(splitWords(chunk.symbol));
    const shared = words.length === 0
      ? 0
      : words.filter((word) => symbolWords.has(word)).length / words.length;
    const parts: ScoreParts = {
      bm25: weights.bm25 * text,
      vector: weights.vector * Math.max(0, cosine),
      name: (exact ? weights.exactSymbol : 0) + weights.symbolWords * shared,
      kind: weights.kind[chunk.kind] ?? 0,
    };
    const score = parts.bm25 + parts.vector + parts.name + parts.kind;
    return { chunk, score, parts };
  });
  hits.sort((a, b) =>
    b.score - a.score || a.chunk.path.localeCompare(b.chunk.path) ||
    a.chunk.startLine - b.chunk.startLine
  );
  return hits.slice(0, options.limit);
}
