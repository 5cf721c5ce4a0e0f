/**
 * Text that draws as nothing but that a model reads, for the tests of what tern removes before
 * the model sees it (src/core/invisible_text.ts).
 */

/** `text` as Unicode tag characters (U+E0000 + each ASCII code): invisible, but a model reads it. */
export function asTags(text: string): string {
  return [...text].map((char) => String.fromCodePoint(0xe0000 + char.charCodeAt(0))).join("");
}

/** `bytes` as variation selectors (U+FE00–FE0F, U+E0100–E01EF): invisible, carrying any bytes. */
export function asSelectors(bytes: Uint8Array): string {
  return [...bytes].map((byte) =>
    String.fromCodePoint(byte < 16 ? 0xfe00 + byte : 0xe0100 + byte - 16)
  ).join("");
}
