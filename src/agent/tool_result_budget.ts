/**
 * The tool-result budget: an observation longer than the limit is saved whole to a file in the
 * session's folder, and the model gets its beginning and end plus the path, which the `read`
 * tool may open (the folder is granted to the file tools for reading).
 */
import { dirname, join } from "../core/path.ts";
import type { Observation } from "../core/observation.ts";
import { makeRealFolder } from "../session/regular_file.ts";
import { truncateMiddle } from "../tools/truncate.ts";
import { estimateTokens } from "../context/tokens.ts";

/** Characters of a long result the model sees before it reads the rest. */
const PREVIEW_CHARS = 8_000;

/** Characters of a result's preview when a round's results are cut to fit, at least. */
const MIN_ROUND_PREVIEW = 400;

/**
 * Bytes of saved results one session's folder keeps: past it the oldest are removed, the newest
 * always kept. A model can make a hundred 400 KB command outputs a round, twenty-five rounds a
 * turn: without a cap, gigabytes in tern's home.
 */
export const MAX_SAVED_RESULTS_BYTES = 256 * 1024 * 1024;

export interface ToolResultBudget {
  /** Longest observation text passed on whole (characters). */
  limit: number;
  /** Folder the long results are saved in (created on first use, mode 0700). */
  dir: string;
  /** Bytes the folder keeps, the oldest removed past it; default MAX_SAVED_RESULTS_BYTES. */
  maxSavedBytes?: number;
}

/**
 * `observation` unchanged when within the budget; otherwise a preview with the path of the
 * full text. A failure to save keeps the preview and says the rest was lost.
 */
export async function applyToolResultBudget(
  observation: Observation,
  callId: string,
  budget: ToolResultBudget,
): Promise<Observation> {
  const text = observation.status === "SUCCEEDED" ? observation.output : observation.message;
  if (text.length <= budget.limit) return observation;
  const preview = truncateMiddle(text, Math.min(PREVIEW_CHARS, budget.limit));
  const lines = countLines(text);
  let note: string;
  try {
    const path = await saveResult(text, callId, budget);
    note = `[The full result (${text.length} characters, ${lines} lines) is saved in ` +
      `"${path}": read it with the read tool (offset and limit select lines)]`;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    note = `[The result had ${text.length} characters; only this preview is kept: ${why}]`;
  }
  const shown = `${preview}\n${note}`;
  return observation.status === "SUCCEEDED"
    ? { ...observation, output: shown }
    : { ...observation, message: shown };
}

async function saveResult(text: string, callId: string, budget: ToolResultBudget): Promise<string> {
  const { dir } = budget;
  // `<session>/tool-results`: neither folder may be a link that takes the result elsewhere.
  makeRealFolder(dir, dirname(dirname(dir)), { what: "tool result" });
  const safe = callId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "call";
  const path = join(dir, `${safe}-${crypto.randomUUID().slice(0, 8)}.txt`);
  // Read before this process writes there, so what it finds is earlier runs' results.
  const results = savedIn(dir);
  const bytes = new TextEncoder().encode(text);
  await Deno.writeFile(path, bytes, { createNew: true, mode: 0o600 });
  results.add(path, bytes.length, budget.maxSavedBytes ?? MAX_SAVED_RESULTS_BYTES);
  return path;
}

/** The saved results of one folder, oldest first, and their bytes together. */
class SavedResults {
  #files: Array<{ path: string; size: number }>;
  #total: number;

  /** What `dir` holds already (a resumed session's results), oldest first. */
  constructor(dir: string) {
    const found: Array<{ path: string; size: number; mtime: number }> = [];
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile) continue;
      const path = join(dir, entry.name);
      const info = Deno.lstatSync(path);
      found.push({ path, size: info.size, mtime: info.mtime?.getTime() ?? 0 });
    }
    found.sort((a, b) => a.mtime - b.mtime);
    this.#files = found.map(({ path, size }) => ({ path, size }));
    this.#total = found.reduce((sum, file) => sum + file.size, 0);
  }

  /** Counts a newly saved file, then removes the oldest while the folder is over `max`. */
  add(path: string, size: number, max: number): void {
    this.#files.push({ path, size });
    this.#total += size;
    while (this.#total > max && this.#files.length > 1) {
      const oldest = this.#files.shift()!;
      this.#total -= oldest.size;
      try {
        Deno.removeSync(oldest.path);
      } catch {
        // Gone already: it no longer counts either way.
      }
    }
  }
}

/** Per folder, for this process: the folder is read once, at its first save. */
const saved = new Map<string, SavedResults>();

function savedIn(dir: string): SavedResults {
  let results = saved.get(dir);
  if (results === undefined) {
    results = new SavedResults(dir);
    saved.set(dir, results);
  }
  return results;
}

function countLines(text: string): number {
  let n = text.endsWith("\n") || text === "" ? 0 : 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The folder a session's saved tool results go in: next to its file, without `.jsonl`. */
export function toolResultsDir(sessionPath: string): string {
  return join(sessionPath.replace(/\.jsonl$/, ""), "tool-results");
}

/**
 * One round's results held to `limitTokens` together (estimated as the compaction counts
 * them): each result within the budget stays, each passes on whole; past it, every result longer
 * than an equal share is saved whole and replaced by a preview of that share (as for one long
 * result). Each result alone may be within `ToolResultBudget.limit` while thirty of them are
 * three times the model's window: the newest round is what compaction never cuts, so a round
 * over the window would be refused by the model server at every try, the session stuck.
 */
export async function fitRound(
  results: ReadonlyArray<{ callId: string; observation: Observation }>,
  budget: { limitTokens: number; dir: string },
): Promise<Observation[]> {
  const texts = results.map(({ observation }) =>
    observation.status === "SUCCEEDED" ? observation.output : observation.message
  );
  const tokens = texts.map((text) => estimateTokens(text));
  const total = tokens.reduce((sum, n) => sum + n, 0);
  if (total <= budget.limitTokens) return results.map(({ observation }) => observation);
  // An equal share of the budget, in characters at each text's own density.
  const share = Math.floor(budget.limitTokens / results.length);
  return await Promise.all(results.map(({ callId, observation }, i) => {
    if (tokens[i] <= share) return observation;
    const chars = Math.max(MIN_ROUND_PREVIEW, Math.floor(texts[i].length * share / tokens[i]));
    return applyToolResultBudget(observation, callId, { limit: chars, dir: budget.dir });
  }));
}
