/** Errors of the composition layer, for the CLI to report. */
import { TernError } from "../core/errors.ts";

/**
 * The session asked for cannot be used: nothing to continue, an unknown or busy session, one of
 * another directory, or contradictory choices. Bad usage.
 */
export class SessionChoiceError extends TernError {
  override name = "SessionChoiceError";
}

/** A message larger than the model's whole context window. Bad input. */
export class MessageTooLargeError extends TernError {
  override name = "MessageTooLargeError";
}

/** A plan was to be continued and the session has none. Bad usage. */
export class NoPlanError extends TernError {
  override name = "NoPlanError";
}
