/**
 * What the interactive UI draws with but its first frame does without: exact widths (the width
 * libraries), Markdown (marked) and diffs (jsdiff). Each costs milliseconds at import, so the
 * session loads them right after its first frame, before it draws any answer, transcript or
 * tool call; until then the modules measure, render and diff with simple stand-ins.
 */
import { loadDiff } from "./diff_view.ts";
import { loadMarkdown } from "./markdown.ts";
import { loadWidth } from "./width.ts";

/** Loads all three (once; later calls wait for the same loads). */
export function loadRenderers(): Promise<void> {
  return Promise.all([loadWidth(), loadMarkdown(), loadDiff()]).then(() => {});
}
