/** A short, stable, synchronous hash for names made from other names. */

/** 32-bit FNV-1a of the UTF-16 code units of `text`, as 8 hex digits. Not cryptographic. */
export function fnv1aHex(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
