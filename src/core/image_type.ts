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

/**
 * Why `bytes`, whose magic number says `type`, is not a whole image, or undefined when its
 * structure holds: a header with a non-zero width and height, and the format's end (PNG's
 * `IEND`, JPEG's frame and scan segments, the RIFF size of WebP). Nothing is
 * decoded. A provider refuses a broken image with an error, and the session then carries it
 * into every later request: caught here, before it is attached.
 */
export function imageStructureProblem(
  bytes: Uint8Array,
  type: ImageMediaType,
): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (at: number, text: string) =>
    [...text].every((char, i) => bytes[at + i] === char.charCodeAt(0));
  switch (type) {
    case "image/png": {
      if (bytes.length < 45 || !ascii(12, "IHDR")) return "no PNG header (IHDR)";
      if (view.getUint32(16) === 0 || view.getUint32(20) === 0) return "a width or height of 0";
      return ascii(bytes.length - 8, "IEND") ? undefined : "cut short (no IEND at its end)";
    }
    case "image/jpeg":
      return jpegProblem(bytes, view);
    case "image/gif": {
      if (bytes.length < 14 || !(ascii(0, "GIF87a") || ascii(0, "GIF89a"))) {
        return "no GIF header";
      }
      // No trailer is asked for: GIFs without one are common, and decoders take them.
      const empty = view.getUint16(6, true) === 0 || view.getUint16(8, true) === 0;
      return empty ? "a width or height of 0" : undefined;
    }
    case "image/webp": {
      if (bytes.length < 20 || !ascii(8, "WEBP") || !ascii(12, "VP8")) return "no WebP header";
      const size = view.getUint32(4, true);
      return size + 8 <= bytes.length && size >= 12 ? undefined : "cut short (its RIFF size)";
    }
  }
}

/** A JPEG's segments walked from the start to its first scan: a frame with a size comes first. */
function jpegProblem(bytes: Uint8Array, view: DataView): string | undefined {
  let at = 2;
  let frame = false;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return "a broken segment";
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xda) return frame ? undefined : "a scan before any frame";
    const length = view.getUint16(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) return "cut short (a segment's length)";
    const sof = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (sof) {
      if (length < 8) return "a broken frame";
      if (view.getUint16(at + 5) === 0 || view.getUint16(at + 7) === 0) {
        return "a width or height of 0";
      }
      frame = true;
    }
    at += 2 + length;
  }
  return "cut short (no scan)";
}
