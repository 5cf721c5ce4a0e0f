/**
 * How many images a conversation carries: a request sends the newest
 * {@linkcode MAX_IMAGES_PER_REQUEST}, and a turn keeps the bytes of no more than that in memory
 * (a model that reads one large image over and over must not fill it).
 */
import type { Message } from "./messages.ts";

/** Most images in one model request: older ones are left out, newest kept. */
export const MAX_IMAGES_PER_REQUEST = 20;

/** The note that stands for an image left out of a request. */
export const OLDER_IMAGE_NOTE =
  `[an older image was left out: at most ${MAX_IMAGES_PER_REQUEST} per request]`;

/**
 * Replaces, in `messages` (in place), each message holding images older than the newest `max`
 * with a copy without them, a note per image in its text: what a request would leave out
 * anyway. The recorded session keeps them (stored by hash before this runs).
 */
export function dropOlderImages(messages: Message[], max = MAX_IMAGES_PER_REQUEST): void {
  let kept = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if ((message.role !== "user" && message.role !== "tool") || !message.images?.length) continue;
    const room = Math.max(0, max - kept);
    kept += Math.min(room, message.images.length);
    if (room >= message.images.length) continue;
    const dropped = message.images.length - room;
    const content = `${message.content}\n${Array(dropped).fill(OLDER_IMAGE_NOTE).join("\n")}`;
    const { images, ...rest } = message;
    // The newest of a message's images stay, as a request keeps them.
    messages[i] = room > 0
      ? { ...message, content, images: images.slice(-room) }
      : { ...rest, content };
  }
}
