/**
 * Deno's cache folder handed on to a Deno process tern starts (a web request, a rewind's
 * restore), so it loads from the same cache instead of a default one it may not have.
 */

/** `{ DENO_DIR }` when this process has it and may read it, else nothing. */
export function denoDirEnv(): Record<string, string> {
  try {
    const dir = Deno.env.get("DENO_DIR");
    return dir ? { DENO_DIR: dir } : {};
  } catch {
    return {};
  }
}
