/** Diffs for the UI of what the file tools changed. */
import { createTwoFilesPatch } from "diff";

/** Diffs of texts larger than this (in characters, both sides) are skipped as too costly. */
const MAX_DIFF_CHARS = 1_000_000;
/** Line edits (an insertion or a deletion each) a diff for the UI may take before it gives up. */
const MAX_DIFF_EDITS = 2_000;
/** Milliseconds a diff for the UI may take before it gives up. */
const MAX_DIFF_MS = 2_000;

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
