/** File helpers shared by the file tools: binary detection, text decoding and diffs. */
import { createTwoFilesPatch } from "diff";

/** How many leading bytes are checked for a NUL byte to call a file binary (as git does). */
export const BINARY_SNIFF_BYTES = 8192;

/** Diffs of texts larger than this (in characters, both sides) are skipped as too costly. */
const MAX_DIFF_CHARS = 1_000_000;

/** True when `bytes` has a NUL byte in its first {@linkcode BINARY_SNIFF_BYTES} bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

/**
 * Decodes UTF-8 strictly, keeping a byte-order mark so that writing the text back keeps it.
 * Returns null when the bytes are not valid UTF-8.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Number of lines in `text`; a final line without a newline counts, an empty text has 0. */
/** Line edits (an insertion or a deletion each) a diff for the UI may take before it gives up. */
const MAX_DIFF_EDITS = 2_000;
/** Milliseconds a diff for the UI may take before it gives up. */
const MAX_DIFF_MS = 2_000;

export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/**
 * A unified diff from `before` to `after` for the UI, labelled with `path`. Returns an empty
 * string when the texts are equal and a one-line note when they are too large to diff.
 */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  if (before.length + after.length > MAX_DIFF_CHARS) {
    return `(diff skipped: ${before.length} -> ${after.length} characters)`;
  }
  // The diff's cost grows with the lines changed times the lines there are: past a bound the
  // library gives up (undefined), and the call (its change made) is not held up by its diff.
  const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, "", "", {
    context: 3,
    maxEditLength: MAX_DIFF_EDITS,
    timeout: MAX_DIFF_MS,
  });
  if (patch === undefined) {
    return `(diff skipped: more than ${MAX_DIFF_EDITS / 2} lines changed)`;
  }
  // Drop the "=====" banner line the library puts first.
  return patch.startsWith("=") ? patch.slice(patch.indexOf("\n") + 1) : patch;
}
