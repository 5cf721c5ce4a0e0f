/** The token-estimate corpus in tests/fixtures/tokens/: one folder per category, `.txt` samples. */
import { join } from "node:path";

/** One corpus sample. */
export interface TokenSample {
  /** `category/name`, the file's path under the corpus folder without `.txt`. */
  id: string;
  category: string;
  text: string;
}

/** The corpus folder. */
export const CORPUS_DIR = new URL("../fixtures/tokens/", import.meta.url).pathname;

/**
 * Samples left out of the fit (bench/token_fit.ts), to show the coefficients are not tuned to
 * every sample: at least one per category, chosen before the fit.
 */
export const HOLDOUT: ReadonlySet<string> = new Set([
  "code/go_https_proxy",
  "code/py_asyncio_queues",
  "prose/md_node_collaborators",
  "prose/chat_assistant_reply",
  "json/package_diff",
  "json/session_jsonl",
  "cjk/ko_prose_release",
  "cjk/ja_man_tern_sandbox",
  "mixed/errors_rustc",
  "mixed/git_diff_tools",
]);

/** Reads every sample, sorted by id. */
export function loadTokenCorpus(dir: string = CORPUS_DIR): TokenSample[] {
  const samples: TokenSample[] = [];
  for (const category of Deno.readDirSync(dir)) {
    if (!category.isDirectory) continue;
    for (const file of Deno.readDirSync(join(dir, category.name))) {
      if (!file.name.endsWith(".txt")) continue;
      samples.push({
        id: `${category.name}/${file.name.slice(0, -4)}`,
        category: category.name,
        text: Deno.readTextFileSync(join(dir, category.name, file.name)),
      });
    }
  }
  return samples.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
