/** Errors of the front ends themselves; `exit_codes.ts` maps both to the usage exit code. */
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
