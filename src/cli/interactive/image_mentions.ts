/**
 * Images a message names: `@path.png` mentions and pasted image paths (an absolute path, maybe
 * quoted or with escaped spaces, as a terminal pastes a dropped file). They are attached through
 * `attachImages` (run_images.ts), so the same confinement holds: inside the workspace, no
 * symbolic link out, a regular image file within the limits.
 */
import type { TernConfig } from "../../config/mod.ts";
import type { ImagePart } from "../../core/messages.ts";
import type { ReadRefusal } from "../../config/workspace_file.ts";
import { looksLikeImageName, MAX_IMAGES_PER_REQUEST } from "../../llm/images.ts";
import { MAX_IMAGE_CHARS_PER_REQUEST } from "../../core/image_budget.ts";
import { withoutTrailingPunctuation } from "../../tui/mentions.ts";

const MENTION = /(?<=^|\s)@(\S+)/g;
/** An absolute path: single- or double-quoted, or unquoted with `\ ` for a space. */
const PASTED = /(?<=^|\s)(?:'(\/[^'\n]+)'|"(\/[^"\n]+)"|(\/(?:\\ |\S)+))/g;

/** What `text` names as images, as written: `@` mentions (without the `@`) and pasted paths. */
export interface NamedImages {
  /** The `@` mentions that name images; the file mentions leave them out. */
  mentions: Set<string>;
  /** Every path to attach, in order of first appearance, without repeats. */
  paths: string[];
}

/** The images `text` names (by file name: .png, .jpg, .jpeg, .gif, .webp). Never throws. */
export function namedImages(text: string): NamedImages {
  const found: { at: number; path: string }[] = [];
  const mentions = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const mention = withoutTrailingPunctuation(match[1]);
    if (!looksLikeImageName(mention)) continue;
    mentions.add(mention);
    found.push({ at: match.index, path: mention });
  }
  for (const match of text.matchAll(PASTED)) {
    const path = match[1] ?? match[2] ?? match[3].replaceAll("\\ ", " ");
    if (looksLikeImageName(path)) found.push({ at: match.index, path });
  }
  const paths = [...new Set(found.sort((a, b) => a.at - b.at).map((f) => f.path))];
  return { mentions, paths };
}

/**
 * The images at `paths` for `config`'s model, each checked on its own: one that cannot be
 * attached becomes a note (`Cannot attach image "<path>": …`) and the others still go.
 */
export async function attachNamedImages(
  workspace: string,
  config: TernConfig,
  paths: readonly string[],
  refuse: ReadRefusal,
): Promise<{ images: ImagePart[]; notes: string[] }> {
  const images: ImagePart[] = [];
  const notes: string[] = [];
  if (paths.length === 0) return { images, notes };
  const root = await Deno.realPath(workspace).catch(() => workspace);
  // Loaded when a message names an image: its verified reader brings node:fs, which the
  // interactive start would otherwise pay before its first frame.
  const { attachImages } = await import("../run_images.ts");
  for (const [index, path] of paths.entries()) {
    if (index >= MAX_IMAGES_PER_REQUEST) {
      // One note for them all: a pasted text naming thousands would otherwise print thousands.
      const more = paths.length - index;
      notes.push(
        more === 1
          ? `Cannot attach image "${path}": at most ${MAX_IMAGES_PER_REQUEST} per message`
          : `Cannot attach ${more} more images ("${path}" and after): at most ${MAX_IMAGES_PER_REQUEST} per message`,
      );
      break;
    }
    try {
      const attached = await attachImages(root, config, [path], refuse);
      // What one request carries, all of the message's images together: one past it is left out
      // with a note now, not silently from the very turn it was given for.
      const chars = [...images, ...attached].reduce((sum, image) => sum + image.data.length, 0);
      if (chars > MAX_IMAGE_CHARS_PER_REQUEST) {
        const mb = (n: number) => (n / 4 * 3 / 1024 / 1024).toFixed(1);
        notes.push(
          `Cannot attach image "${path}": with the images before it, ${mb(chars)} MB of images ` +
            `is over the ${mb(MAX_IMAGE_CHARS_PER_REQUEST)} MB one request carries; attach ` +
            "fewer or smaller images",
        );
        continue;
      }
      images.push(...attached);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      notes.push(message);
      // A model without images refuses them all alike: one note says it.
      if (message.startsWith("Cannot attach images:")) break;
    }
  }
  return { images, notes };
}
