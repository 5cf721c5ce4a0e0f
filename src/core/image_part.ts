/**
 * An image as a message part: its bytes checked (type, size) and named by content hash. Below
 * both the providers and the tools (read returns images), so it sits in core. tern bundles no
 * image library (none well kept runs under Deno without native code), so an image over the
 * size limit is refused with what to do, never downscaled.
 */
import type { ImagePart } from "./messages.ts";
import { imageSize, imageStructureProblem, MAX_IMAGE_SIDE, sniffImageType } from "./image_type.ts";
import { visibleText } from "./terminal_text.ts";

/** The largest image sent (Anthropic's per-image limit; OpenAI's is larger). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/**
 * `bytes` as an image part.
 * @throws {Error} `Cannot attach image "<name>": …` when the bytes are no PNG, JPEG, GIF or
 * WebP, not a whole one, larger than MAX_IMAGE_BYTES, or claim a side over MAX_IMAGE_SIDE.
 */
export async function imagePart(bytes: Uint8Array, name: string): Promise<ImagePart> {
  const mediaType = sniffImageType(bytes);
  if (mediaType === undefined) {
    throw new Error(`Cannot attach image "${name}": not a PNG, JPEG, GIF or WebP image`);
  }
  if (bytes.length > MAX_IMAGE_BYTES) throw new Error(tooLargeMessage(name, bytes.length));
  const problem = imageStructureProblem(bytes, mediaType);
  if (problem !== undefined) {
    throw new Error(
      `Cannot attach image "${name}": not a whole ${mediaType.slice(6).toUpperCase()} image ` +
        `(${problem})`,
    );
  }
  const size = imageSize(bytes, mediaType);
  if (typeof size !== "string" && Math.max(size.width, size.height) > MAX_IMAGE_SIDE) {
    throw new Error(
      `Cannot attach image "${name}": ${size.width}×${size.height} pixels is over the ` +
        `${MAX_IMAGE_SIDE}-pixel limit of a side; make it smaller first (tern does not downscale)`,
    );
  }
  return { mediaType, data: bytes.toBase64(), sha256: await sha256Hex(bytes) };
}

/**
 * Why `bytes`, recorded as `mediaType`, are not an image tern sends, or undefined: the checks
 * `imagePart()` makes (type by magic number, size, structure, longest side), for an image that
 * did not come through it here (a session line, an image file stored by an older tern, a tool
 * worker's result). A provider refuses such an image, and the session would carry it into every
 * later request. Never throws.
 */
export function imageProblem(bytes: Uint8Array, mediaType: string): string | undefined {
  const type = sniffImageType(bytes);
  if (type === undefined) return "not a PNG, JPEG, GIF or WebP image";
  if (type !== mediaType) {
    const recorded = visibleText(mediaType.slice(0, 40));
    return `a ${type.slice(6).toUpperCase()} image recorded as ${recorded}`;
  }
  if (bytes.length > MAX_IMAGE_BYTES) {
    return `${bytes.length} bytes, over the ${MAX_IMAGE_BYTES}-byte limit`;
  }
  const problem = imageStructureProblem(bytes, type);
  if (problem !== undefined) return `not a whole image: ${problem}`;
  const size = imageSize(bytes, type);
  if (typeof size !== "string" && Math.max(size.width, size.height) > MAX_IMAGE_SIDE) {
    return `${size.width}×${size.height} pixels, over the ${MAX_IMAGE_SIDE}-pixel limit of a side`;
  }
  return undefined;
}

/** Why an image of `size` bytes is refused: over the limit, and what to do instead. */
export function tooLargeMessage(name: string, size: number): string {
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  return `Cannot attach image "${name}": ${mb(size)} MB is over the ${mb(MAX_IMAGE_BYTES)} MB ` +
    "limit; make it smaller first (tern does not downscale)";
}

/** Hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}
