/**
 * A session's images (a person's attachments, images a tool returned): stored once per content
 * hash in the session folder (`<folder>/images/<sha256>`), the entries carrying only the hash.
 * A provider wrapper reads them back into each request, keeping the newest a request carries.
 */
import type { ImageMediaType, ImagePart, Message } from "../core/messages.ts";
import {
  imageSize,
  imageStructureProblem,
  MAX_IMAGE_SIDE,
  sniffImageType,
} from "../core/image_type.ts";
import { dirname, join } from "../core/path.ts";
import { MAX_IMAGE_BYTES, sha256Hex } from "../llm/images.ts";
import type { Provider } from "../llm/types.ts";
import { ImageBudget, OLDER_IMAGE_NOTE } from "../core/image_budget.ts";
import { asSessionWriteError } from "./errors.ts";
import { makeRealFolder } from "./regular_file.ts";
import { visibleText } from "../core/terminal_text.ts";

const HASH = /^[0-9a-f]{64}$/;

/** The image folder of the session at `sessionPath` (shared by the folder's sessions). */
export function imagesFolder(sessionPath: string): string {
  return join(dirname(sessionPath), "images");
}

/**
 * Writes `message`'s images into `folder` (once per hash, owner-only) and returns the message
 * as the session stores it: each image without its bytes. An image whose data is not base64 is
 * not written (a resumed session then tells it is missing), and `options.warn` is told why; the
 * turn goes on. Throws only when the folder cannot be written.
 */
export function storeImages<T extends Message>(
  message: T,
  folder: string,
  options: { warn?: (text: string) => void } = {},
): T {
  if ((message.role !== "user" && message.role !== "tool") || message.images === undefined) {
    return message;
  }
  try {
    // A link in its place would take the images outside tern's home.
    makeRealFolder(folder, dirname(folder), { what: "image" });
  } catch (error) {
    throw asSessionWriteError(folder, error);
  }
  for (const image of message.images) {
    if (image.data === "" || !HASH.test(image.sha256)) continue;
    const bytes = verifiedBytes(image);
    if (typeof bytes === "string") {
      options.warn?.(`Cannot store image ${visibleText(image.sha256.slice(0, 12))}: ${bytes}`);
      continue;
    }
    writeImage(join(folder, image.sha256), bytes, folder);
  }
  return { ...message, images: message.images.map((image) => ({ ...image, data: "" })) };
}

/**
 * The bytes of `image` when its data is base64, else why not. Whether they are what its hash
 * names is checked when they are read back (`readStored`): a stored file that is not is left
 * out then, as a missing one is.
 */
function verifiedBytes(image: ImagePart): Uint8Array | string {
  try {
    return Uint8Array.fromBase64(image.data);
  } catch {
    return "its data is not base64";
  }
}

/** Writes `bytes` to `path` once: a file already there is the image (or is found not to be). */
function writeImage(path: string, bytes: Uint8Array, folder: string): void {
  try {
    Deno.writeFileSync(path, bytes, { createNew: true, mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw asSessionWriteError(folder, error);
  }
}

/**
 * `provider`, with stored images read back from `folder` into every request. An image whose
 * file is gone, too large, not what its hash says or refused by today's image checks
 * (`sendProblem`) is left out with a note in the text, and so is one carried inline (a tool's in
 * this turn, or a line a session file holds) whose bytes are not what its hash says; past what a
 * request carries (`ImageBudget`: a count and a size) the oldest are left out the same way.
 */
export function withStoredImages(provider: Provider, folder: string): Provider {
  const cache = new Map<string, string>();
  return {
    name: provider.name,
    async *stream(request, signal) {
      const messages = await loadImages(request.messages, folder, cache);
      yield* provider.stream({ ...request, messages }, signal);
    },
  };
}

async function loadImages(
  messages: Message[],
  folder: string,
  cache: Map<string, string>,
): Promise<Message[]> {
  if (!messages.some((m) => (m.role === "user" || m.role === "tool") && m.images?.length)) {
    return messages;
  }
  const budget = new ImageBudget();
  const result: Message[] = [];
  // The cache keeps only this request's images: what the next request sends again, never
  // every image a long session has shown.
  const used = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if ((message.role !== "user" && message.role !== "tool") || !message.images?.length) {
      result.push(message);
      continue;
    }
    const kept: ImagePart[] = [];
    const notes: string[] = [];
    for (const image of [...message.images].reverse()) {
      if (budget.full) {
        notes.push(OLDER_IMAGE_NOTE);
        continue;
      }
      const data = image.data !== ""
        ? await verifiedInline(image, cache)
        : await readStored(image, folder, cache);
      if (typeof data !== "string") {
        const hash = visibleText(image.sha256.slice(0, 12));
        notes.push(
          data !== undefined
            ? `[image ${hash} is not an image tern sends (${data.problem}): left out]`
            : image.data !== ""
            ? `[image ${hash} is not the image its hash names: left out]`
            : `[image ${hash} is no longer in the session folder]`,
        );
        continue;
      }
      if (!budget.take(data.length)) {
        notes.push(OLDER_IMAGE_NOTE);
        continue;
      }
      kept.unshift({ ...image, data });
      used.add(image.sha256);
    }
    const content = notes.length === 0
      ? message.content
      : `${message.content}\n${notes.join("\n")}`;
    const { images: _images, ...rest } = message;
    result.push(kept.length > 0 ? { ...message, content, images: kept } : { ...rest, content });
  }
  for (const hash of cache.keys()) if (!used.has(hash)) cache.delete(hash);
  return result.reverse();
}

/** Why an image is left out though its bytes are what its hash names. */
interface Unsendable {
  problem: string;
}

/**
 * The bytes of an image carried inline when they are what its hash says (checked once, then
 * known through `cache`), or undefined.
 */
async function verifiedInline(
  image: ImagePart,
  cache: Map<string, string>,
): Promise<string | undefined> {
  if (cache.get(image.sha256) === image.data) return image.data;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(image.data);
  } catch {
    return undefined;
  }
  if (await sha256Hex(bytes) !== image.sha256) return undefined;
  cache.set(image.sha256, image.data);
  return image.data;
}

/**
 * Why `bytes` are not an image tern sends today, or undefined: the checks an attached image
 * passes (`imagePart`), run again, since an image stored before a check existed (hollow, or a
 * side over MAX_IMAGE_SIDE) would otherwise fail every request of a resumed session.
 */
function sendProblem(bytes: Uint8Array, mediaType: ImageMediaType): string | undefined {
  const type = sniffImageType(bytes);
  if (type === undefined) return "not a PNG, JPEG, GIF or WebP image";
  if (type !== mediaType) return `a ${type} image recorded as ${visibleText(mediaType)}`;
  const problem = imageStructureProblem(bytes, type);
  if (problem !== undefined) return `not a whole image: ${problem}`;
  const size = imageSize(bytes, type);
  if (typeof size !== "string" && Math.max(size.width, size.height) > MAX_IMAGE_SIDE) {
    return `${size.width}×${size.height} pixels, over the ${MAX_IMAGE_SIDE}-pixel limit of a side`;
  }
  return undefined;
}

async function readStored(
  image: ImagePart,
  folder: string,
  cache: Map<string, string>,
): Promise<string | Unsendable | undefined> {
  if (!HASH.test(image.sha256)) return undefined;
  const known = cache.get(image.sha256);
  if (known !== undefined) return known;
  try {
    const path = join(folder, image.sha256);
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > MAX_IMAGE_BYTES) return undefined;
    const bytes = await Deno.readFile(path);
    if (await sha256Hex(bytes) !== image.sha256) return undefined;
    const problem = sendProblem(bytes, image.mediaType);
    if (problem !== undefined) return { problem };
    const data = bytes.toBase64();
    cache.set(image.sha256, data);
    return data;
  } catch {
    return undefined;
  }
}
