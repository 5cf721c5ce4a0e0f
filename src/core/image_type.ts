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
 * The longest side, in pixels, of an image tern sends. Anthropic refuses a larger one (and a
 * refused image stays in the session, failing every later request), and a header that claims
 * more from a few bytes is a decompression bomb's shape.
 */
export const MAX_IMAGE_SIDE = 8000;

/** An image's width and height in pixels, as its header says. */
export interface ImageSize {
  width: number;
  height: number;
}

/**
 * Why `bytes`, whose magic number says `type`, is not a whole image, or undefined when its
 * structure holds: a header with a non-zero width and height, image data, and the format's end
 * (PNG's chunks up to `IEND`, JPEG's frame, scan and end marker, a GIF's first image, WebP's
 * RIFF size and a frame chunk). Nothing is decoded. A provider refuses a broken image with an
 * error, and the session then carries it into every later request: caught here, before it is
 * attached.
 */
export function imageStructureProblem(
  bytes: Uint8Array,
  type: ImageMediaType,
): string | undefined {
  const size = imageSize(bytes, type);
  if (typeof size === "string") return size;
  if (size.width === 0 || size.height === 0) return "a width or height of 0";
  switch (type) {
    case "image/png":
      return pngProblem(bytes);
    case "image/jpeg":
      return jpegEnds(bytes) ? undefined : "cut short (no end of image after its scan)";
    case "image/gif":
      return gifProblem(bytes);
    case "image/webp":
      return webpHasFrame(bytes) ? undefined : "no image in it (no VP8, VP8L or ANMF chunk)";
  }
}

/**
 * The width and height `bytes` (whose magic number says `type`) claim in their header, or why
 * there is no readable header. Nothing is decoded: a header can claim any size.
 */
export function imageSize(bytes: Uint8Array, type: ImageMediaType): ImageSize | string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case "image/png": {
      // IHDR is the first chunk and 13 bytes long; a provider refuses any other.
      if (bytes.length < 45 || !ascii(bytes, 12, "IHDR") || view.getUint32(8) !== 13) {
        return "no PNG header (IHDR)";
      }
      return { width: view.getUint32(16), height: view.getUint32(20) };
    }
    case "image/jpeg": {
      const header = jpegHeader(bytes, view);
      return typeof header === "string" ? header : header.size;
    }
    case "image/gif": {
      if (bytes.length < 14 || !(ascii(bytes, 0, "GIF87a") || ascii(bytes, 0, "GIF89a"))) {
        return "no GIF header";
      }
      return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
    }
    case "image/webp":
      return webpSize(bytes, view);
  }
}

/** A PNG's chunks walked from the header: image data (`IDAT`), then `IEND` as its last. */
function pngProblem(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let data = false;
  for (let at = 8; at + 12 <= bytes.length;) {
    const end = at + 12 + view.getUint32(at);
    if (end > bytes.length) return "cut short (a chunk's length)";
    if (ascii(bytes, at + 4, "IDAT")) data = true;
    if (ascii(bytes, at + 4, "IEND")) {
      if (!data) return "no image data (IDAT)";
      return end === bytes.length ? undefined : "data after its end (IEND)";
    }
    at = end;
  }
  return "cut short (no IEND at its end)";
}

/**
 * A GIF's blocks walked past its colour table and extensions to its first image. No trailer is
 * asked for: GIFs without one are common, and decoders take them.
 */
function gifProblem(bytes: Uint8Array): string | undefined {
  let at = 13 + (bytes[10] & 0x80 ? 3 * 2 ** ((bytes[10] & 7) + 1) : 0);
  while (at < bytes.length) {
    const block = bytes[at];
    if (block === 0x2c) return at + 10 <= bytes.length ? undefined : "cut short (its first image)";
    if (block !== 0x21) return block === 0x3b ? "no image in it" : "a broken block";
    // An extension: its label, then data sub-blocks up to an empty one.
    at += 2;
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at] + 1;
    at++;
  }
  return "cut short (no image in it)";
}

/** Whether a WebP's RIFF chunks hold a frame (an extended header alone shows nothing). */
function webpHasFrame(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = Math.min(bytes.length, view.getUint32(4, true) + 8);
  for (let at = 12; at + 8 <= end;) {
    if (ascii(bytes, at, "VP8 ") || ascii(bytes, at, "VP8L") || ascii(bytes, at, "ANMF")) {
      return true;
    }
    const size = view.getUint32(at + 4, true);
    at += 8 + size + (size & 1);
  }
  return false;
}

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * A WebP's size from its first chunk: a lossy frame (`VP8 `), a lossless one (`VP8L`) or the
 * extended header's canvas (`VP8X`), and its RIFF size within the file.
 */
function webpSize(bytes: Uint8Array, view: DataView): ImageSize | string {
  if (bytes.length < 20 || !ascii(bytes, 8, "WEBP") || !ascii(bytes, 12, "VP8")) {
    return "no WebP header";
  }
  const riff = view.getUint32(4, true);
  if (riff + 8 > bytes.length || riff < 12) return "cut short (its RIFF size)";
  if (ascii(bytes, 12, "VP8 ") && bytes.length >= 30 && ascii(bytes, 23, "\x9d\x01\x2a")) {
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
  }
  if (ascii(bytes, 12, "VP8L") && bytes.length >= 25 && bytes[20] === 0x2f) {
    const bits = view.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (ascii(bytes, 12, "VP8X") && bytes.length >= 30) {
    const side = (at: number) => 1 + (bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16);
    return { width: side(24), height: side(27) };
  }
  return "no WebP header";
}

/**
 * Whether an end-of-image marker follows the first scan: the entropy-coded data escapes every
 * 0xFF, so the pair is the marker. Data after it is allowed (cameras append some).
 */
function jpegEnds(bytes: Uint8Array): boolean {
  const header = jpegHeader(bytes, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (typeof header === "string") return false;
  for (let at = bytes.length - 1; at > header.scan; at = bytes.lastIndexOf(0xd9, at - 1)) {
    if (bytes[at] === 0xd9 && bytes[at - 1] === 0xff) return true;
  }
  return false;
}

/**
 * A JPEG's segments walked from the start to its first scan: a frame with a size comes first.
 * The size of the first frame, and where the scan's marker sits.
 */
function jpegHeader(
  bytes: Uint8Array,
  view: DataView,
): { size: ImageSize; scan: number } | string {
  let at = 2;
  let frame: ImageSize | undefined;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return "a broken segment";
    const marker = bytes[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xda) return frame ? { size: frame, scan: at } : "a scan before any frame";
    const length = view.getUint16(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) return "cut short (a segment's length)";
    const sof = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (sof) {
      if (length < 8) return "a broken frame";
      frame ??= { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
    }
    at += 2 + length;
  }
  return "cut short (no scan)";
}
