/**
 * The code index of a workspace (issue 22) composed from its parts: the tools' walker and
 * .gitignore rules find the files, the verified workspace reader reads them, the chunker cuts
 * them and the store keeps them. The index file lives under tern's home, keyed by workspace,
 * never inside the repository, which could otherwise plant a crafted database.
 */
import { join, relative } from "node:path";
import { readWorkspaceText } from "../config/workspace_file.ts";
import { chunkFile } from "../index/chunker.ts";
import { IndexStore } from "../index/store.ts";
import { encodeCwd } from "../session/paths.ts";
import { IgnoreRules, walk } from "../tools/ignore_rules.ts";

/** Files larger than this (bytes) are not indexed. */
export const INDEX_FILE_MAX_BYTES = 1024 * 1024;

/** Where the index of `workspace` (an absolute real path) lives: `<ternHome>/index/<key>.sqlite`. */
export function indexPath(ternHome: string, workspace: string): string {
  return join(ternHome, "index", `${encodeCwd(workspace)}.sqlite`);
}

/** What one {@linkcode indexWorkspace} did. */
export interface IndexSummary {
  /** Files chunked and stored because they are new or changed. */
  indexed: number;
  unchanged: number;
  removed: number;
  /** Files skipped because they hold a NUL byte. */
  binary: number;
  /** Files skipped because they exceed {@linkcode INDEX_FILE_MAX_BYTES}. */
  tooLarge: number;
  /** Files refused by the workspace reader (a symlink out, hard links, not regular). */
  refused: number;
  /** Chunks written for the indexed files. */
  chunks: number;
  /** The store's one-line notice when it rebuilt a corrupt or foreign file. */
  notice?: string;
}

/** Options of {@linkcode indexWorkspace}. */
export interface IndexOptions {
  /** Told the workspace-relative path of each file as it is looked at. */
  onFile?: (path: string, seen: number) => void;
  signal?: AbortSignal;
}

/**
 * Brings the index at `file` up to date with `workspace` (absolute real path): walks it under
 * its .gitignore files without following symlinks, re-chunks only files whose sha-256 changed
 * and removes files no longer present. Binary, too large and refused files are counted, not
 * stored (a file that became one of them is removed).
 */
export async function indexWorkspace(
  workspace: string,
  file: string,
  options: IndexOptions = {},
): Promise<IndexSummary> {
  await Deno.mkdir(join(file, ".."), { recursive: true, mode: 0o700 });
  const { store, notice } = IndexStore.open(file);
  const summary: IndexSummary = {
    indexed: 0,
    unchanged: 0,
    removed: 0,
    binary: 0,
    tooLarge: 0,
    refused: 0,
    chunks: 0,
  };
  if (notice !== undefined) summary.notice = notice;
  try {
    const known = store.fileHashes();
    const present = new Set<string>();
    let seen = 0;
    for await (const entry of walk(workspace, new IgnoreRules(workspace), options)) {
      // Symlinks are never followed: a link may lead anywhere, also out of the workspace.
      if (!entry.isFile || entry.isSymlink) continue;
      const path = relative(workspace, entry.path).split("\\").join("/");
      options.onFile?.(path, ++seen);
      const info = await Deno.lstat(entry.path).catch(() => null);
      if (info === null || !info.isFile) continue;
      if (info.size > INDEX_FILE_MAX_BYTES) {
        summary.tooLarge++;
        continue;
      }
      const text = readSafely(workspace, entry.path);
      if (text === null) summary.refused++;
      if (typeof text !== "string") continue;
      if (text.length > INDEX_FILE_MAX_BYTES) {
        summary.tooLarge++;
        continue;
      }
      if (text.includes("\0")) {
        summary.binary++;
        continue;
      }
      present.add(path);
      if (known.get(path) === await sha256(text)) {
        summary.unchanged++;
        continue;
      }
      const chunked = await chunkFile(path, text);
      store.replaceFile(chunked);
      summary.indexed++;
      summary.chunks += chunked.chunks.length;
    }
    for (const path of known.keys()) {
      if (present.has(path)) continue;
      store.removeFile(path);
      summary.removed++;
    }
    return summary;
  } finally {
    store.close();
  }
}

/**
 * The text of `path`, read only inside the workspace (readWorkspaceText): null when refused or
 * unreadable, undefined when it vanished.
 */
export function readSafely(workspace: string, path: string): string | null | undefined {
  let refused = false;
  try {
    const text = readWorkspaceText(workspace, path, { what: "file", warn: () => refused = true });
    return refused ? null : text;
  } catch {
    return null;
  }
}

/** The sha-256 of `text` as UTF-8, hex: the hash the chunker stores. */
export async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
