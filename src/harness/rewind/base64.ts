/**
 * Restore data travels as JSON, its bytes as base64. Apart from restore_ops.ts because the
 * restore process (restore_main.ts) loads it and must not load what starts that process.
 */

/** Base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** The bytes of base64 `text`. */
export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
