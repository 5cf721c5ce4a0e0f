/**
 * `tern run --image`: workspace image files read through the file tools' confinement (inside
 * the workspace, no symlink out, a regular file), refused as the model's own reads are (the
 * person's deny rules, secret folders: `modelReadGuard`) and as a mention is (one link only), and
 * checked (type, size, count, a model that takes images) before the turn starts.
 */
import type { TernConfig } from "../config/mod.ts";
import type { ImagePart } from "../core/messages.ts";
import { imagePart, MAX_IMAGE_BYTES, MAX_IMAGES_PER_REQUEST } from "../llm/images.ts";
import { MAX_IMAGE_CHARS_PER_REQUEST } from "../core/image_budget.ts";
import { checkPath } from "../tools/paths.ts";
import { readFileVerified } from "../tools/verified_io.ts";
import { InputError } from "./errors.ts";
import { resolve } from "../core/path.ts";
import type { ReadRefusal } from "../config/workspace_file.ts";

/**
 * The images at `paths` (relative to `workspace`), for the model `config` names; `refuse` is the
 * model's read guard (what its own tools may not read is not attached for it either).
 * @throws {InputError} (exit code 2) `Cannot attach image "<path>": …` for a path outside the workspace, a
 * missing or unreadable file, one the guard refuses or with more than one link, no image, too
 * large, or more than a request carries with the images before it; or when the model takes no
 * images.
 */
export async function attachImages(
  workspace: string,
  config: TernConfig,
  paths: readonly string[],
  refuse: ReadRefusal,
): Promise<ImagePart[]> {
  if (paths.length > MAX_IMAGES_PER_REQUEST) {
    throw new InputError(
      `Cannot attach ${paths.length} images: at most ${MAX_IMAGES_PER_REQUEST} go with one task`,
    );
  }
  const { configuredCatalog } = await import("../llm/setup.ts");
  const info = configuredCatalog(config).lookup(config.provider, config.model);
  if (!info.images) {
    throw new InputError(
      `Cannot attach images: model "${config.model}" does not take images (its catalog entry ` +
        `says images: false; set "images": true for it under "models" in the config if it does)`,
    );
  }
  const images: ImagePart[] = [];
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  let bytesSoFar = 0;
  let charsSoFar = 0;
  for (const path of paths) {
    let checked;
    try {
      checked = await checkPath(workspace, path);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new InputError(`Cannot attach image "${path}": ${reason}`);
    }
    // A link the person's deny rules match, a secret folder's file: as the read tool refuses.
    // A folder (whose link count is its subfolders) or a missing file is said as what it is.
    const refused = refuse(checked.real, resolve(workspace, path)) ??
      (!checked.info?.isFile
        ? "not a readable regular file inside the workspace"
        : (checked.info.nlink ?? 1) > 1
        ? "a file with more than one link, not attached"
        : undefined);
    if (refused !== undefined) throw new InputError(`Cannot attach image "${path}": ${refused}`);
    // Checked before reading: a huge (or sparse) file named like an image is never read whole.
    if (checked.info?.isFile && checked.info.size > MAX_IMAGE_BYTES) {
      throw new InputError(
        `Cannot attach image "${path}": ${mb(checked.info.size)} MB is over the ` +
          `${mb(MAX_IMAGE_BYTES)} MB limit; make it smaller first (tern does not downscale)`,
      );
    }
    // A request carries the newest images that fit: more given at once would leave the first
    // out of the very turn they were given for (the model told, the person not).
    const size = checked.info?.size ?? 0;
    bytesSoFar += size;
    charsSoFar += Math.ceil(size / 3) * 4;
    if (charsSoFar > MAX_IMAGE_CHARS_PER_REQUEST) {
      throw new InputError(
        `Cannot attach image "${path}": with the images before it, ${mb(bytesSoFar)} MB of ` +
          `images is over the ${mb(MAX_IMAGE_CHARS_PER_REQUEST / 4 * 3)} MB one request ` +
          "carries; attach fewer or smaller images",
      );
    }
    // One byte past the limit at most: a file grown since the check is refused, not read.
    const bytes = checked.info?.isFile
      ? readFileVerified(checked.root, checked.real, MAX_IMAGE_BYTES + 1)
      : null;
    if (bytes === null) {
      throw new InputError(
        `Cannot attach image "${path}": not a readable regular file inside the workspace`,
      );
    }
    try {
      images.push(await imagePart(bytes, path));
    } catch (error) {
      throw new InputError(error instanceof Error ? error.message : String(error));
    }
  }
  return images;
}
