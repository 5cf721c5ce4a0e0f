/**
 * One file of the code index made ready to store: read inside the workspace with the verified
 * reader, checked, hashed, chunked (parsed in a parser process: code_index_parser.ts) and
 * prepared (words and local vectors). It writes nothing and needs no store, so it runs in the
 * indexing thread or in a chunk worker (code_index_pool.ts) alike.
 */
import { readWorkspaceText } from "../config/workspace_file.ts";
import { sha256 } from "../index/chunker.ts";
import { generatedBy } from "../index/generated.ts";
import { type PreparedFile, prepareFile } from "../index/prepared.ts";
import type { ParserProcess } from "./code_index_parser.ts";

/** Files larger than this (bytes) are not indexed. */
export const INDEX_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Why a file is not stored: gone, binary (a NUL byte), generated (generatedBy()), too large, or
 * refused by the reader.
 */
export type NotStored = "gone" | "binary" | "generated" | "tooLarge" | "refused";

/** What to make of one file. */
export interface FileRequest {
  /** Absolute path of the workspace. */
  workspace: string;
  /** `workspace` is its own real path (the run looked once): it is not resolved per file. */
  workspaceIsReal: boolean;
  /** Workspace-relative, `/`-separated. */
  path: string;
  /** The same, absolute, inside `workspace`. */
  absolute: string;
  /** The sha-256 the index holds for it: the same content is not chunked again. */
  knownHash?: string;
  /** Compute the local embeddings (false when an endpoint gives the vectors). */
  vectors: boolean;
}

/** What became of one file: not stored, unchanged (same hash), or ready to store. */
export type FileResult =
  | { notStored: NotStored }
  | { unchanged: string }
  | { prepared: PreparedFile };

/**
 * Reads, checks, hashes and (when its content is new) chunks and prepares one file, parsing it
 * in `parser`'s process.
 */
export async function prepareIndexFile(
  request: FileRequest,
  parser: ParserProcess,
): Promise<FileResult> {
  const text = readSafely(request.workspace, request.absolute, request.workspaceIsReal);
  if (text === null) return { notStored: "refused" };
  if (text === undefined) return { notStored: "gone" };
  if (text.length > INDEX_FILE_MAX_BYTES) return { notStored: "tooLarge" };
  if (text.includes("\0")) return { notStored: "binary" };
  if (generatedBy(request.path, text) !== undefined) return { notStored: "generated" };
  const hash = sha256(text);
  if (request.knownHash === hash) return { unchanged: hash };
  const chunked = await parser.chunk(request.path, text, hash);
  return { prepared: prepareFile(chunked, request.vectors) };
}

/**
 * The text of `path`, read only inside the workspace and only where no symlink leads elsewhere
 * (readWorkspaceText with `noLinks`; `workspaceIsReal`: the caller resolved it): null when
 * refused or unreadable, undefined when it vanished. What the index may read is decided by the
 * path it walked (hidden paths, deny rules), so a file reached through a link is not read. In
 * tern's process a folder swapped for a link meanwhile can race that check: a session reads
 * through the tool worker in bubblewrap instead (`LiveIndexOptions.read`).
 */
export function readSafely(
  workspace: string,
  path: string,
  workspaceIsReal = false,
): string | null | undefined {
  let refused = false;
  try {
    const text = readWorkspaceText(workspace, path, {
      what: "file",
      warn: () => refused = true,
      workspaceIsReal,
      noLinks: true,
    });
    return refused ? null : text;
  } catch {
    return null;
  }
}
