/**
 * Images in the conversation: which bytes are an image tern can send, and the limits (the
 * checks themselves sit in core/image_part.ts, where the read tool reaches them too).
 */
import { sniffImageType } from "../core/image_type.ts";

export { sniffImageType };
export { imagePart, MAX_IMAGE_BYTES, sha256Hex } from "../core/image_part.ts";

export { MAX_IMAGES_PER_REQUEST } from "../core/image_budget.ts";

/** True for a file name an image may have (what `read` and mentions treat as an image). */
export function looksLikeImageName(path: string): boolean {
  return /\.(png|jpe?g|gif|webp)$/i.test(path);
}
