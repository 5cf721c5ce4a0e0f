/** Which bytes are an image tern can send (the file tools ask too, so it sits below both). */
import type { ImageMediaType } from "./messages.ts";

/** The image type of `bytes` by their magic number, or undefined for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45) {
    return bytes[10] === 0x42 && bytes[11] === 0x50 ? "image/webp" : undefined;
  }
  return undefined;
}
