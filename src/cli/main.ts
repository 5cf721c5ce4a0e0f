/** Parses argv and dispatches to a front end. Returns the process exit code. */
export function main(_args: string[]): Promise<number> {
  return Promise.resolve(0);
}
