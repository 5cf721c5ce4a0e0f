/** What the input decoder makes of the bytes a terminal sends. */

/**
 * One input event. Printable text is `{kind: "key", name: "text", text}`; named keys use the
 * names below with their modifiers (Ctrl+C is `{name: "c", ctrl: true}`, Shift+Enter
 * `{name: "enter", shift: true}`); a bracketed paste arrives whole; terminal replies to queries
 * (kitty keyboard flags, DECRQM, device attributes) are `report` and never reach the editor.
 */
export type KeyEvent =
  | {
    kind: "key";
    /**
     * "text" for printable input (see `text`), a lowercase letter or digit with ctrl/alt, or one of:
     * enter, tab, backspace, delete, escape, up, down, left, right, home, end, pageup, pagedown,
     * insert, space, f1…f12.
     */
    name: string;
    text?: string;
    ctrl: boolean;
    alt: boolean;
    shift: boolean;
  }
  | { kind: "paste"; text: string }
  | { kind: "report"; sequence: string };

/** A key event with no modifiers (for tests and for synthesised keys). */
export function key(
  name: string,
  modifiers: Partial<Record<"ctrl" | "alt" | "shift", boolean>> = {},
): KeyEvent {
  return {
    kind: "key",
    name,
    ctrl: modifiers.ctrl ?? false,
    alt: modifiers.alt ?? false,
    shift: modifiers.shift ?? false,
  };
}

/** Printable text as a key event. */
export function textKey(text: string): KeyEvent {
  return { kind: "key", name: "text", text, ctrl: false, alt: false, shift: false };
}
