/**
 * The base for errors that reach the command line. The CLI catches a `TernError` and prints its
 * message without a stack trace; any other error is a bug. Which exit code an error class
 * ends the process with is decided in one place, `src/cli/exit_codes.ts`: an error carries
 * data about what went wrong, never an exit code.
 */

/** An error meant for the person at the terminal. */
export class TernError extends Error {
  override name = "TernError";
}
