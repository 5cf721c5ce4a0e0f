/**
 * File helpers shared by the file tools: binary detection and text decoding (diffs, which load
 * the `diff` package, are in file_diff.ts: the tools that only read never load it).
 */

/** How many leading bytes are checked for a NUL byte to call a file binary (as git does). */
export const BINARY_SNIFF_BYTES = 8192;

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
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/**
 * The permission bits a rewrite of a file whose mode is `mode` keeps: read, write and execute,
 * never set-user-ID, set-group-ID or sticky. The new file is tern's user's: kept, a set-ID bit
 * would make the model's content run as that user (root, under a root tern) for whoever runs it,
 * where the kernel clears those bits on any write by an unprivileged writer.
 */
export function keptMode(mode: number): number {
  return mode & 0o777;
}
