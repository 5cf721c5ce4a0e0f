/** Reads optional configuration files: a missing file is not an error, anything else is. */
import { ConfigError, describeReadError } from "./errors.ts";

/**
 * Returns the text of `file`, or undefined when it (or a parent folder) does not exist.
 * Synchronous on purpose: it runs on the start-up path for a few small files.
 * @throws {ConfigError} naming the file when it exists but cannot be read.
 */
export function readOptionalText(file: string, what: string): string | undefined {
  try {
    // A FIFO would never answer the read (and a device might never end): only a regular file
    // is read, wherever a link leads.
    const info = Deno.statSync(file);
    if (!info.isFile) {
      const kind = info.isDirectory ? "a folder" : info.isFifo ? "a FIFO" : "a special file";
      throw new ConfigError(
        `Cannot read ${what} "${file}": it is ${kind}, not a regular file; ` +
          "replace it with the file, or remove it",
        { file },
      );
    }
    return Deno.readTextFileSync(file);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw new ConfigError(`Cannot read ${what} "${file}": ${describeReadError(error)}`, {
      file,
      cause: error,
    });
  }
}
