/** Whether a text is shaped like a credential: what error messages and shown URLs withhold. */

/** How an API key starts (`sk-…`, `key_…`). */
export const KEY_PREFIX = /^(?:sk|pk|rk|gsk|xai|key)[-_]/i;
const TOKEN_LIKE = /^[A-Za-z0-9_\-.=+/]{24,}$/;

/**
 * True for a string shaped like a credential on its own: it starts like an API key (`sk-…`), or
 * is a run of 24 or more token characters holding both letters and digits.
 */
export function tokenShaped(text: string): boolean {
  if (KEY_PREFIX.test(text)) return true;
  return TOKEN_LIKE.test(text) && /\d/.test(text) && /[A-Za-z]/.test(text);
}
