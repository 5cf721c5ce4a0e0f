/**
 * Large pastes collapsed to a one-line marker in the editor and expanded back when the message
 * is submitted, so a pasted log does not push the prompt off the screen.
 */
import type { Span } from "./editor_text.ts";

/** A paste with more lines than this is collapsed. */
export const PASTE_MAX_LINES = 5;
/** A paste with more characters than this is collapsed. */
export const PASTE_MAX_CHARS = 500;

const MARKER = /\[paste #\d+ (?:\+\d+ lines|\d+ chars)\]/g;

/** The pastes collapsed in one message, by marker. */
export class Pastes {
  #texts = new Map<string, string>();
  #next = 1;

  /**
   * The marker standing for `text` when it is large (`[paste #1 +42 lines]`, or
   * `[paste #1 812 chars]` for a single long line); undefined when it should be inserted as is.
   */
  collapse(text: string): string | undefined {
    const lines = text.replace(/\n$/, "").split("\n").length;
    if (lines <= PASTE_MAX_LINES && text.length <= PASTE_MAX_CHARS) return undefined;
    const id = this.#next++;
    const marker = lines > 1
      ? `[paste #${id} +${lines} lines]`
      : `[paste #${id} ${text.length} chars]`;
    this.#texts.set(marker, text);
    return marker;
  }

  /** `text` with every known marker replaced by its paste. */
  expand(text: string): string {
    return text.replace(MARKER, (marker) => this.#texts.get(marker) ?? marker);
  }

  /** Where known markers are in `line`: atomic for cursor movement and deletion. */
  spans(line: string): Span[] {
    if (this.#texts.size === 0 || !line.includes("[paste #")) return [];
    const spans: Span[] = [];
    for (const match of line.matchAll(MARKER)) {
      if (this.#texts.has(match[0])) {
        spans.push({ start: match.index, end: match.index + match[0].length });
      }
    }
    return spans;
  }

  /** Forgets every paste; numbering starts again at 1. */
  clear(): void {
    this.#texts.clear();
    this.#next = 1;
  }
}
