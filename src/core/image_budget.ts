/**
 * How many images a conversation carries: a request sends the newest
 * {@linkcode MAX_IMAGES_PER_REQUEST}, no more than {@linkcode MAX_IMAGE_CHARS_PER_REQUEST} of
 * them together, and a turn keeps the bytes of no more than that in memory (a model that reads
 * one large image over and over must not fill it).
 */
import type { ImagePart, Message } from "./messages.ts";
import type { Observation } from "./observation.ts";

/** Most images in one model request: older ones are left out, newest kept. */
export const MAX_IMAGES_PER_REQUEST = 20;

/**
 * Most base64 characters of images in one model request (about 9 MB of image files). Model
 * servers refuse larger requests (Gemini at 20 MB, Anthropic at 32 MB), and the newest round is
 * what compaction never cuts: a round of twenty 5 MB images would be refused at every try, the
 * session stuck. One image of the largest size attached (`MAX_IMAGE_BYTES`, 5 MB) fits.
 */
export const MAX_IMAGE_CHARS_PER_REQUEST = 12 * 1024 * 1024;

/** The note that stands for an image left out of a request. */
export const OLDER_IMAGE_NOTE = `[an older image was left out: at most ${MAX_IMAGES_PER_REQUEST} ` +
  `images, ${MAX_IMAGE_CHARS_PER_REQUEST / 1024 / 1024} MB of them, per request]`;

/**
 * The newest images a request keeps, taken newest first: each fits while the count and the
 * characters allow, and once one does not, no older one does (a request's images are always
 * its newest).
 */
export class ImageBudget {
  #count: number;
  #chars: number;
  #full = false;

  constructor(count = MAX_IMAGES_PER_REQUEST, chars = MAX_IMAGE_CHARS_PER_REQUEST) {
    this.#count = count;
    this.#chars = chars;
  }

  /** Whether the next older image, of `chars` base64 characters, is kept (and counted). */
  take(chars: number): boolean {
    if (this.#full || this.#count === 0 || chars > this.#chars) {
      this.#full = true;
      return false;
    }
    this.#count--;
    this.#chars -= chars;
    return true;
  }

  /** Whether no older image is kept any more. */
  get full(): boolean {
    return this.#full;
  }

  /** How many of `images` (oldest first) are kept, their newest. */
  keep(images: readonly ImagePart[]): number {
    let kept = 0;
    for (let i = images.length - 1; i >= 0 && this.take(images[i].data.length); i--) kept++;
    return kept;
  }
}

/**
 * Replaces, in `messages` (in place), each message holding images older than a request keeps
 * with a copy without them, a note per image in its text: what a request would leave out
 * anyway. The recorded session keeps them (stored by hash before this runs).
 */
export function dropOlderImages(messages: Message[], budget = new ImageBudget()): void {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if ((message.role !== "user" && message.role !== "tool") || !message.images?.length) continue;
    const left = leftOf(message.images, message.content, budget);
    if (left === undefined) continue;
    const { images: _older, ...rest } = message;
    messages[i] = { ...rest, content: left.text, ...left.images };
  }
}

/**
 * Strips, in place, the images of a round's finished results that no request would carry: those
 * older than what a request keeps of the results already finished, in call order. Results
 * finish in any order, but an image once left out stays left out, so the round holds the bytes
 * of no more than a request's images however many calls return one (128 reads of a 3.7 MB
 * image held 1.8 GB until the round ended). A stripped result says so in its text, as a message
 * does in {@linkcode dropOlderImages}; the session records the note, not the image.
 */
export function dropOlderResultImages(
  results: Array<{ observation: Observation } | undefined>,
  budget = new ImageBudget(),
): void {
  for (let i = results.length - 1; i >= 0; i--) {
    const result = results[i];
    const observation = result?.observation;
    if (observation?.status !== "SUCCEEDED" || !observation.images?.length) continue;
    const left = leftOf(observation.images, observation.output, budget);
    if (left === undefined) continue;
    const { images: _older, ...rest } = observation;
    result!.observation = { ...rest, output: left.text, ...left.images };
  }
}

/**
 * What stays of `images` (oldest first) and their `text` once `budget` took the newest it keeps:
 * those images (none left: no `images` at all) and the text with a note per image left out;
 * undefined when every image stays.
 */
function leftOf(
  images: ImagePart[],
  text: string,
  budget: ImageBudget,
): { images: { images?: ImagePart[] }; text: string } | undefined {
  const kept = budget.keep(images);
  if (kept === images.length) return undefined;
  const notes = Array(images.length - kept).fill(OLDER_IMAGE_NOTE).join("\n");
  return { images: kept > 0 ? { images: images.slice(-kept) } : {}, text: `${text}\n${notes}` };
}
