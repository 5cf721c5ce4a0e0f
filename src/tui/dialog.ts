/** The contract every dialog of the interactive UI keeps (dialogs.ts, select_dialog.ts). */
import type { KeyEvent } from "./key_event.ts";

/** A dialog: `render` on every frame, `handle` for every key until it says it is done. */
export interface Dialog<T> {
  /**
   * Lines of at most `width` cells; `height`, when known, is the rows the dialog has on screen
   * (a dialog that can shrink fits itself into them).
   */
  render(width: number, height?: number): string[];
  handle(event: KeyEvent): { done: true; value: T } | { done: false };
  /**
   * The answer when the dialog closes unanswered because the session ends (a hangup, a kill,
   * Ctrl-D): what Esc gives, and never more than that (the permission question's is a denial).
   */
  readonly cancelled: T;
}
