/** Reads optional configuration files: a missing file is not an error, anything else is. */
import { ConfigError, describeReadError } from "./errors.ts";

/**
 * Returns the text of `file`, or undefined when it (or a parent folder) does not exist.
 * Synchronous on purpose: it runs on the start-up path for a few small files.
 * @throws {ConfigError} naming the file when it exists but cannot be read.
 */
export function readOptionalText(file: string, what: string): string | undefined {
  try {
    return Deno.readTextFileSync(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw new ConfigError(`Cannot read ${what} "${file}": ${describeReadError(error)}`, {
      file,
      cause: error,
    });
  }
}
