/**
 * The base for errors that reach the command line. The CLI catches a `TernError`, prints its
 * message without a stack trace and exits with its `exitCode`; any other error is a bug.
 */

/** Options for {@linkcode TernError}: the standard `cause` plus the exit code. */
export interface TernErrorOptions extends ErrorOptions {
  /** Process exit code for the CLI (default 1). */
  exitCode?: number;
}

/** An error meant for the person at the terminal; `exitCode` is the process exit code. */
export class TernError extends Error {
  override name = "TernError";
  /** Process exit code the CLI uses when this error ends the run (default 1). */
  exitCode = 1;

  constructor(message: string, options: TernErrorOptions = {}) {
    const { exitCode, ...errorOptions } = options;
    super(message, errorOptions);
    if (exitCode !== undefined) this.exitCode = exitCode;
  }
}
