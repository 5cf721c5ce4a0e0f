/**
 * Errors of the front ends themselves; `exit_codes.ts` maps UsageError and InputError to the
 * usage exit code, OutputError to a failure.
 */
import { TernError } from "../core/errors.ts";

/** Wrong usage of the command line; the message says what was wrong and how to fix it. */
export class UsageError extends TernError {
  override name = "UsageError";
  constructor(message: string) {
    super(`${message} (run \`tern --help\` for usage)`);
  }
}

/**
 * A command was given something it cannot use, though its syntax was right: an unknown name,
 * a missing file, arguments that are not the JSON asked for, a workspace that does not exist.
 */
export class InputError extends TernError {
  override name = "InputError";
}

/**
 * tern's own output could not be written (stdout on a full disk, a device that refuses it). A
 * reader that went away (`Deno.errors.BrokenPipe`) is not one: that ends the command quietly.
 */
export class OutputError extends TernError {
  override name = "OutputError";
  constructor(cause: unknown) {
    const text = cause instanceof Error ? cause.message : String(cause);
    // "No space left on device (os error 28)": the OS's number says nothing more.
    super(`cannot write output: ${text.replace(/ \(os error \d+\)[\s\S]*$/, "")}`, { cause });
  }
}

/**
 * Runs `write` (a write to stdout) and turns its failure into an {@linkcode OutputError}; a
 * `BrokenPipe` is thrown as it is.
 * @throws {OutputError} when the write failed for another reason.
 */
export function writingOutput(write: () => void): void {
  try {
    write();
  } catch (error) {
    if (error instanceof Deno.errors.BrokenPipe || error instanceof OutputError) throw error;
    throw new OutputError(error);
  }
}
