/**
 * Deno's cache folder handed on to a Deno process tern starts (a web request, a rewind's
 * restore), so it loads from the same cache instead of a default one it may not have.
 */

/**
 * The environment of a Deno process of tern's own: no colour, no update check, no package.json
 * (tern has none; one a command created at the checkout's root could name an npm workspace whose
 * package Deno would load in place of one tern imports), and this process's DENO_DIR.
 */
export function ownDenoEnv(): Record<string, string> {
  return {
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PACKAGE_JSON: "1",
    ...denoDirEnv(),
  };
}

/** `{ DENO_DIR }` when this process has it and may read it, else nothing. */
export function denoDirEnv(): Record<string, string> {
  try {
    const dir = Deno.env.get("DENO_DIR");
    return dir ? { DENO_DIR: dir } : {};
  } catch {
    return {};
  }
}
