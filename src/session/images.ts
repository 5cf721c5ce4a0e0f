/**
 * A session's images (a person's attachments, images a tool returned): stored once per content
 * hash in the session folder (`<folder>/images/<sha256>`), the entries carrying only the hash.
 * A provider wrapper reads them back into each request, keeping the newest a request carries.
 */
import type { ImagePart, Message } from "../core/messages.ts";
import { imageProblem, MAX_IMAGE_BYTES, sha256Hex } from "../core/image_part.ts";
import { dirname, join } from "../core/path.ts";
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
 * `provider`, with stored images read back from `folder` into every request. Every image a
 * request carries, stored or inline (a tool's in this turn, or a line an older session file
 * holds), passes today's image checks (`imageProblem`: type, size, structure, longest side)
 * once, the outcome kept while requests still carry it; one whose file is gone, whose bytes are
 * not what its hash says, or that the checks refuse is left out with a note in the text, and
 * past what a request carries (`ImageBudget`: a count and a size) the oldest are left out the
 * same way.
 */
export function withStoredImages(provider: Provider, folder: string): Provider {
  const checks: ImageChecks = { stored: new Map(), gone: new Set(), inline: new WeakMap() };
  return {
    name: provider.name,
    async *stream(request, signal) {
      const messages = await loadImages(request.messages, folder, checks);
      yield* provider.stream({ ...request, messages }, signal);
    },
  };
}

/** Why an image is left out though its bytes are what its hash names. */
interface Unsendable {
  problem: string;
}

/**
 * What the checks found, so that each image is checked once, not at every request. `stored`, by
 * hash and media type, holds what a stored file is (base64 to send, or why not) and `gone` the
 * hashes whose file is missing or not what the hash says, both while requests still carry them.
 * `inline` holds what each image carried inline is (undefined: not what its hash says).
 */
interface ImageChecks {
  stored: Map<string, string | Unsendable>;
  gone: Set<string>;
  inline: WeakMap<ImagePart, string | Unsendable | undefined>;
}

async function loadImages(
  messages: Message[],
  folder: string,
  checks: ImageChecks,
): Promise<Message[]> {
  if (!messages.some((m) => (m.role === "user" || m.role === "tool") && m.images?.length)) {
    return messages;
  }
  const budget = new ImageBudget();
  const result: Message[] = [];
  // What is kept is only this request's images: what the next request sends again, never
  // every image a long session has shown.
  const seen = new Set<string>();
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
      const data = await checkedImage(image, folder, checks, seen);
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
    }
    const content = notes.length === 0
      ? message.content
      : `${message.content}\n${notes.join("\n")}`;
    const { images: _images, ...rest } = message;
    result.push(kept.length > 0 ? { ...message, content, images: kept } : { ...rest, content });
  }
  for (const key of checks.stored.keys()) if (!seen.has(key)) checks.stored.delete(key);
  for (const key of checks.gone) if (!seen.has(key)) checks.gone.delete(key);
  return result.reverse();
}

/**
 * The base64 of `image` to send, why it is not sent, or undefined when its bytes are not what
 * its hash names (or its stored file is gone). Checked once: the outcome is kept in `checks`,
 * a stored image's under the keys `seen` is told.
 */
async function checkedImage(
  image: ImagePart,
  folder: string,
  checks: ImageChecks,
  seen: Set<string>,
): Promise<string | Unsendable | undefined> {
  if (image.data !== "") {
    if (checks.inline.has(image)) return checks.inline.get(image);
    const outcome = await checkedInline(image);
    checks.inline.set(image, outcome);
    return outcome;
  }
  if (!HASH.test(image.sha256)) return undefined;
  // The hash names the bytes, the media type is what a provider is told they are.
  const key = `${image.sha256} ${image.mediaType}`;
  seen.add(key).add(image.sha256);
  const known = checks.stored.get(key);
  if (known !== undefined) return known;
  if (checks.gone.has(image.sha256)) return undefined;
  const bytes = await readStored(image, folder);
  if (bytes === undefined) {
    checks.gone.add(image.sha256);
    return undefined;
  }
  const problem = imageProblem(bytes, image.mediaType);
  const outcome = problem !== undefined ? { problem } : bytes.toBase64();
  checks.stored.set(key, outcome);
  return outcome;
}

/**
 * The data of an image carried inline when it is base64 of the bytes its hash names and they
 * pass today's checks, why not when they fail them, or undefined when they are not what its
 * hash names. Base64 that is not as tern writes it (spaces, no padding) is refused too: the
 * data goes out as it is, and a provider may refuse it.
 */
async function checkedInline(image: ImagePart): Promise<string | Unsendable | undefined> {
  if (image.data.length > MAX_IMAGE_BASE64) {
    return { problem: `over the ${MAX_IMAGE_BYTES}-byte limit` };
  }
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(image.data);
  } catch {
    return undefined;
  }
  if (!HASH.test(image.sha256) || await sha256Hex(bytes) !== image.sha256) return undefined;
  if (bytes.toBase64() !== image.data) return { problem: "its data is not plain base64" };
  const problem = imageProblem(bytes, image.mediaType);
  return problem !== undefined ? { problem } : image.data;
}

/** Base64 of MAX_IMAGE_BYTES, rounded up. */
const MAX_IMAGE_BASE64 = Math.ceil(MAX_IMAGE_BYTES / 3) * 4;

/** The bytes of a stored image when its file is there, not too large, and what its hash says. */
async function readStored(image: ImagePart, folder: string): Promise<Uint8Array | undefined> {
  try {
    const path = join(folder, image.sha256);
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size > MAX_IMAGE_BYTES) return undefined;
    const bytes = await Deno.readFile(path);
    return await sha256Hex(bytes) === image.sha256 ? bytes : undefined;
  } catch {
    return undefined;
  }
}
