/** Argv as a person reads it in a shell. */

/**
 * Characters a word cannot show as they are: C0 and C1 controls (the line break among them),
 * line and paragraph separators, and the bidi controls that reorder what follows them.
 */
// deno-lint-ignore no-control-regex
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
// deno-lint-ignore no-control-regex
const ESCAPED = /[\\'\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = {
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  "\\": "\\\\",
  "'": "\\'",
};

/**
 * Joins argv for display, quoting what the shell would split or expand. A word holding a line
 * break or another control character is quoted bash's `$'…'` way (`\n`, `\t`, `\xNN` per
 * UTF-8 byte), so the line stays one line and still means the same word to bash: a name a
 * repository chose (a folder's) cannot start a line of its own in what tern prints.
 */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellWord).join(" ");
}

function shellWord(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  if (!UNPRINTABLE.test(arg)) return `'${arg.replaceAll("'", `'\\''`)}'`;
  return `$'${arg.replace(ESCAPED, (char) => NAMED[char] ?? bytes(char))}'`;
}

/** `char` as bash's `\xNN` escapes of its UTF-8 bytes. */
function bytes(char: string): string {
  return [...new TextEncoder().encode(char)]
    .map((byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("");
}
