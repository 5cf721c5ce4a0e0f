/** Errors of the code index meant for the person (printed without a stack trace). */
import { TernError } from "../core/errors.ts";

/**
 * The index cannot be created or written (a read-only home, a full disk), or its embedding
 * endpoint failed. The message names the file or URL and what to do.
 */
export class IndexError extends TernError {
  override name = "IndexError";
}
