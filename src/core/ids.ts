/** Short random ids for entries and facts. */

/** A random id of `bytes` bytes in hex (8 characters by default) that `taken` does not hold. */
export function uniqueHexId(taken: ReadonlySet<string>, bytes = 4): string {
  const buffer = new Uint8Array(bytes);
  for (;;) {
    crypto.getRandomValues(buffer);
    const id = Array.from(buffer, (byte) => byte.toString(16).padStart(2, "0")).join("");
    if (!taken.has(id)) return id;
  }
}
