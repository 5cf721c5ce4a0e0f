/**
 * What the code_search and code_symbols tools need from the code index, as an interface: the
 * harness supplies it (src/harness/code_index_live.ts), loaded at the first call, so the tools'
 * module loads neither SQLite nor tree-sitter.
 */
import type { Hit } from "../index/rank.ts";
import type { Chunk, RelationKind } from "../index/types.ts";

/** What a code_symbols call asks about a name. */
export type SymbolQuestion =
  | "definitions"
  | "callers"
  | "callees"
  | "implementations"
  | "importers";

/** One answer to a symbol question: a chunk, and how it relates to the name asked about. */
export interface SymbolAnswer {
  chunk: Chunk;
  /** The relation that links it (CALLS, EXTENDS, …); none for a definition. */
  relation?: RelationKind;
  /** The name as written where it relates (`this.parse`, `Base<T>`, `./util.ts`). */
  name?: string;
}

/** Search results, with what the caller should know about the index behind them. */
export interface IndexAnswer<T> {
  results: T[];
  /**
   * One line each: the refresh was cut by its budget, another process is updating the index,
   * the index was rebuilt. Empty when the results come from an up-to-date index.
   */
  notes: string[];
}

/** The code index of one workspace as the tools use it. Methods throw a ToolError on failure. */
export interface CodeIndexAccess {
  /** The best chunks for `query`, after bringing the index up to date within its budget. */
  search(
    query: string,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<Hit>>;
  /** The chunks answering `question` about `name`, from the stored relations. */
  symbols(
    name: string,
    question: SymbolQuestion,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<SymbolAnswer>>;
}
