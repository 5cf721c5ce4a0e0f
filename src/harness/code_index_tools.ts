/**
 * The code index behind a conversation's code_search and code_symbols tools, loaded at their
 * first call: until then nothing here loads SQLite, tree-sitter or the index's code, so start-up
 * and turns that do not search pay nothing (code_index_live.ts does the work).
 */
import type { PermissionRule, SearchWeights } from "../config/types.ts";
import type {
  CodeIndexAccess,
  IndexAnswer,
  SymbolAnswer,
  SymbolQuestion,
} from "../tools/code_index_access.ts";
import type { Hit } from "../index/rank.ts";
import type { PathTest } from "../sandbox/denied_paths.ts";
import type { LiveCodeIndex } from "./code_index_live.ts";
import type { WorkspaceHidden } from "./path_denials.ts";

/** Where the index is and how it ranks, read at each call (settings may change between turns). */
export interface CodeIndexSettings {
  /** Absolute real path of the workspace. */
  workspace: string;
  ternHome: string;
  /** The person's home folder, whose secret stores the index never reads. */
  home?: string;
  weights?: SearchWeights;
  /**
   * The person's permission rules: a path their deny rules hide from the reading tools (see
   * sandbox/denied_paths.ts), by its name or as where a link they match leads, is not indexed,
   * and left out of the results whenever the index read it.
   */
  rules?: readonly PermissionRule[];
  /**
   * What `rules` hide in the workspace now (hiddenInWorkspace), kept by the conversation for
   * all its readers; default: searched at each call.
   */
  hidden?: () => Promise<WorkspaceHidden | undefined>;
  /** How the index reads a file (LiveIndexOptions.read); default: in tern's process. */
  read?: (path: string) => Promise<string | null | undefined>;
}

/** A conversation's code index: loads at the first search, told of the agent's changes. */
export class CodeIndexTools implements CodeIndexAccess {
  #settings: () => CodeIndexSettings;
  #live: LiveCodeIndex | undefined;
  #loading: Promise<LiveCodeIndex> | undefined;

  constructor(settings: () => CodeIndexSettings) {
    this.#settings = settings;
  }

  /**
   * Tells the index files changed (see LiveCodeIndex.markChanged). Before the first search it
   * does nothing: that search walks the whole workspace anyway.
   */
  markChanged(paths?: readonly string[]): void {
    this.#live?.markChanged(paths);
  }

  async search(
    query: string,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<Hit>> {
    return await (await this.#load()).search(query, options);
  }

  async symbols(
    name: string,
    question: SymbolQuestion,
    options: { limit: number; signal: AbortSignal },
  ): Promise<IndexAnswer<SymbolAnswer>> {
    return await (await this.#load()).symbols(name, question, options);
  }

  /**
   * What the person's deny rules hide now, as a test of workspace-relative paths; undefined
   * without a deny rule with a path (then nothing more loads).
   */
  async #denied(): Promise<PathTest | undefined> {
    const { rules, workspace, hidden } = this.#settings();
    const { deniedTest } = await import("./code_index_hidden.ts");
    return await deniedTest(workspace, rules, hidden);
  }

  /** Closes the store if it was opened, and ends the index's parser process (settles then). */
  close(): Promise<void> {
    return this.#live?.close() ?? Promise.resolve();
  }

  async #load(): Promise<LiveCodeIndex> {
    this.#loading ??= Promise.all([
      import("./code_index_live.ts"),
      import("./code_index.ts"),
      import("../sandbox/protected_paths.ts"),
      import("./code_index_hidden.ts"),
    ]).then(([{ LiveCodeIndex }, { indexPath }, { secretLocations }, { sandboxHidden }]) => {
      const { workspace, ternHome, home, read } = this.#settings();
      this.#live = new LiveCodeIndex({
        workspace,
        file: indexPath(ternHome, workspace),
        hidden: sandboxHidden(secretLocations, ternHome, home),
        denied: () => this.#denied(),
        ...(read === undefined ? {} : { read }),
      });
      return this.#live;
    });
    // A failed load (a module that does not load) is tried again by the next call.
    this.#loading.catch(() => this.#loading = undefined);
    const live = await this.#loading;
    const { rankWeights } = await import("./code_index_live.ts");
    live.weights = rankWeights(this.#settings().weights);
    return live;
  }
}
