/** `tern index [path]` and `tern search "query"`: build and query the workspace's code index. */
import { dirname, resolve } from "../core/path.ts";
import { loadConfig } from "../config/mod.ts";
import {
  cannotCreateIndex,
  embeddingEndpointOf,
  INDEX_MAX_DEPTH,
  INDEX_MAX_FOLDER_ENTRIES,
  indexPath,
  type IndexSummary,
  indexWorkspace,
  queryVectorOf,
} from "../harness/code_index.ts";
import { indexHidden } from "../harness/code_index_hidden.ts";
import { type ScoreParts, withWeights } from "../index/rank.ts";
import { INDEX_MAX_CHUNKS, IndexStore } from "../index/store.ts";
import { INDEX_FILE_MAX_CHUNKS } from "../index/chunker.ts";
import { GITIGNORE_LIMITS } from "../tools/ignore_rules.ts";
import { SecretMasker } from "../sandbox/secrets.ts";
import { terminalText, visibleText } from "../core/terminal_text.ts";
import { themeFor } from "../tui/theme.ts";
import type { CommandLine } from "./args.ts";
import { InputError } from "./errors.ts";
import {
  colorWanted,
  processWriters,
  readEnv,
  resolveWorkspace,
  terminalWriters,
} from "./process_env.ts";
import type { RunFlags } from "./run.ts";

type IndexLine = Extract<CommandLine, { command: "index" }>;
type SearchLine = Extract<CommandLine, { command: "search" }>;

/** Indexes the workspace (or `line.path`) and prints a one-line summary; returns the exit code. */
export async function runIndexCommand(line: IndexLine, flags: RunFlags): Promise<number> {
  // A relative path is taken from --cwd, like every other path the command line names.
  const workspace = resolveWorkspace(
    line.path === undefined ? flags.cwd : resolve(flags.cwd, line.path),
  );
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  // Paths come from the repository: each goes through the sanitizer, our own sequences do not.
  const { out, err } = processWriters();
  const progress = Deno.stderr.isTerminal();
  const started = performance.now();
  const file = indexPath(config.ternHome, workspace);
  // The agent's searches refresh the same index: one writer at a time, the others wait or,
  // for a search, answer from what is committed with a note.
  using _lock = await Deno.mkdir(dirname(file), { recursive: true, mode: 0o700 })
    .then(() => indexLock(file))
    .catch((error) => {
      throw cannotCreateIndex(file, error);
    });
  // What the agent's index may not read is neither stored nor sent to an embedding endpoint.
  const skip = await indexHidden({
    workspace,
    ternHome: config.ternHome,
    home: readEnv("HOME"),
    rules: config.rules,
  });
  // A file's name may hold a key: shown masked, as `tern search` shows it.
  const masker = heldKeysMasker(config);
  const quoted = (path: string) => JSON.stringify(masker.mask(path));
  const summary = await indexWorkspace(workspace, file, {
    skip,
    onFile: progress
      ? (path, seen) =>
        err(`\r\x1b[2Kindexing ${seen}: ${visibleText(masker.mask(path).slice(-60))}`)
      : undefined,
    embeddings: embeddingEndpointOf(config),
  });
  if (progress) err("\r\x1b[2K");
  if (summary.notice !== undefined) err(`tern: ${terminalText(summary.notice)}\n`);
  for (const { path, why } of summary.unparsed) {
    const line = `cannot parse ${quoted(path)} (${why}): indexed as plain text`;
    err(`tern: ${terminalText(line)}\n`);
  }
  for (const { path, why } of summary.cut) {
    const line = why === "depth"
      ? `left out ${quoted(path)}: folders deeper than ${INDEX_MAX_DEPTH} levels are not indexed`
      : why === "entries"
      ? `indexed only part of ${quoted(path)}: it holds more than ` +
        `${INDEX_MAX_FOLDER_ENTRIES} entries, the most read of one folder`
      : `left out ${quoted(path)}: its .gitignore came past the ` +
        `${GITIGNORE_LIMITS.totalPatterns} patterns one walk uses`;
    err(`tern: ${terminalText(line)}\n`);
  }
  for (const { path, atLine } of summary.cutFiles) {
    const line = `indexed only part of ${quoted(path)}: from line ${atLine} on it is ` +
      `left out (one file makes at most ${INDEX_FILE_MAX_CHUNKS} chunks)`;
    err(`tern: ${terminalText(line)}\n`);
  }
  if (summary.full > 0) {
    const line = `the code index holds its most chunks (${INDEX_MAX_CHUNKS}): ${summary.full} ` +
      "file(s) were not indexed";
    err(`tern: ${terminalText(line)}\n`);
  }
  out(summaryLine(summary, performance.now() - started) + "\n");
  return 0;
}

/**
 * `12 indexed, 30 unchanged, 1 removed, 2 binary, 3 generated, 1 too large, 140 chunks in 0.4s`
 * (`, 1 refused`, `, 1 unparsed` and `, 1 not stored (index full)` after "too large" when there
 * are any).
 */
export function summaryLine(summary: IndexSummary, millis: number): string {
  const refused = summary.refused > 0 ? `, ${summary.refused} refused` : "";
  const unparsed = summary.unparsed.length > 0 ? `, ${summary.unparsed.length} unparsed` : "";
  const full = summary.full > 0 ? `, ${summary.full} not stored (index full)` : "";
  return `${summary.indexed} indexed, ${summary.unchanged} unchanged, ${summary.removed} ` +
    `removed, ${summary.binary} binary, ${summary.generated} generated, ` +
    `${summary.tooLarge} too large${refused}${unparsed}${full}, ` +
    `${summary.chunks} chunks in ${(millis / 1000).toFixed(1)}s`;
}

/** Prints the index's best chunks for `line.query`; returns the exit code. */
export async function runSearchCommand(line: SearchLine, flags: RunFlags): Promise<number> {
  const workspace = resolveWorkspace(flags.cwd);
  const { config } = await loadConfig({ cwd: workspace, flags: flags.config });
  const file = indexPath(config.ternHome, workspace);
  if (!isFile(file)) {
    throw new InputError(`No code index for "${workspace}": run \`tern index\` first`);
  }
  const { store, notice } = IndexStore.open(file);
  // Chunks quote the repository's files: text goes through the terminal sanitizer.
  const writers = processWriters();
  const { out, err } = terminalWriters(writers, { json: line.json });
  try {
    if (notice !== undefined) err(`tern: ${notice}\n`);
    const weights = config.searchWeights === undefined
      ? undefined
      : withWeights(config.searchWeights);
    const queryVector = await queryVectorOf(embeddingEndpointOf(config), store, line.query);
    // The repository's code (and its file names) may hold a key: shown masked, as the
    // code_search tool shows it.
    const masker = heldKeysMasker(config);
    const hits = store.search(line.query, { limit: line.limit, weights, queryVector }).map((
      hit,
    ) => ({
      ...hit,
      chunk: {
        ...hit.chunk,
        path: masker.mask(hit.chunk.path),
        symbol: masker.mask(hit.chunk.symbol),
        signature: masker.mask(hit.chunk.signature),
      },
    }));
    if (line.json) {
      out(
        JSON.stringify(hits.map(({ chunk, score, parts }) => ({
          path: chunk.path,
          startLine: chunk.startLine,
          endLine: chunk.endLine,
          kind: chunk.kind,
          symbol: chunk.symbol,
          score,
          signature: chunk.signature,
          ...(line.explain && parts !== undefined ? { parts } : {}),
        }))) + "\n",
      );
      return 0;
    }
    const theme = themeFor(colorWanted(Deno.stdout.isTerminal()));
    if (hits.length === 0) err(`tern: nothing in the index matches "${line.query}"\n`);
    for (const { chunk, score, parts } of hits) {
      const signature = visibleText(
        chunk.signature.split(/\r\n|\r|\n/)[0].replaceAll("\t", " ").trim(),
      );
      writers.out(
        // A repository's file name (or symbol) with a line break would forge a result line:
        // its controls are shown, not obeyed.
        `${visibleText(chunk.path)}:${chunk.startLine}  ${chunk.kind} ` +
          `${visibleText(chunk.symbol)}  ${score.toFixed(3)}` +
          (signature === "" ? "" : `  ${theme.dim(signature)}`) + "\n",
      );
      if (line.explain && parts !== undefined) writers.out(`  ${explainParts(parts)}\n`);
    }
    return 0;
  } finally {
    store.close();
  }
}

/** `= bm25 0.812 + vector 0.301 + name 1.400 + kind 0.100`: what each signal added. */
export function explainParts(parts: ScoreParts): string {
  return `= bm25 ${parts.bm25.toFixed(3)} + vector ${parts.vector.toFixed(3)} + ` +
    `name ${parts.name.toFixed(3)} + kind ${parts.kind.toFixed(3)}`;
}

/** The index's lock file, locked exclusively (waiting for a search's refresh to end). */
async function indexLock(file: string): Promise<Deno.FsFile> {
  const handle = await Deno.open(`${file}.lock`, {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  await handle.lock(true).catch(() => {
    // A filesystem without locks: go on without one (writes still take SQLite's lock).
  });
  return handle;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** A masker of the keys tern holds (and the key formats) for what this command prints. */
function heldKeysMasker(config: { apiKey?: string; apiKeys?: Record<string, string> }) {
  return new SecretMasker(
    [config.apiKey, ...Object.values(config.apiKeys ?? {})].filter((key) => key !== undefined),
  );
}
