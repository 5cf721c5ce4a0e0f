/**
 * Images in the conversation: which bytes are an image tern can send, and the limits. tern
 * bundles no image library (none well kept runs under Deno without native code), so an image
 * over the size limit is refused with what to do, never downscaled.
 */
import type { ImagePart } from "../core/messages.ts";
import { sniffImageType } from "../core/image_type.ts";

export { sniffImageType };

/** The largest image sent (Anthropic's per-image limit; OpenAI's is larger). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Most images in one model request: older ones are left out, newest kept. */
export const MAX_IMAGES_PER_REQUEST = 20;

/** True for a file name an image may have (what `read` and mentions treat as an image). */
export function looksLikeImageName(path: string): boolean {
  return /\.(png|jpe?g|gif|webp)$/i.test(path);
}

/**
 * `bytes` as an image part.
 * @throws {Error} `Cannot attach image "<name>": …` when the bytes are no PNG, JPEG, GIF or
 * WebP, or larger than MAX_IMAGE_BYTES.
 */
export async function imagePart(bytes: Uint8Array, name: string): Promise<ImagePart> {
  const mediaType = sniffImageType(bytes);
  if (mediaType === undefined) {
    throw new Error(`Cannot attach image "${name}": not a PNG, JPEG, GIF or WebP image`);
  }
  if (bytes.length > MAX_IMAGE_BYTES) {
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    throw new Error(
      `Cannot attach image "${name}": ${mb(bytes.length)} MB is over the ` +
        `${mb(MAX_IMAGE_BYTES)} MB limit; make it smaller first (tern does not downscale)`,
    );
  }
  return { mediaType, data: base64(bytes), sha256: await sha256Hex(bytes) };
}

/** Hex SHA-256 of `bytes`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}
