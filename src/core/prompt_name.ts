/**
 * A name a repository chose (a file's or folder's path), as it goes into the model's prompt: on
 * one line. The prompt's sections are lines (`## <path>`, `- <topic file>: <title>`), so a name
 * that broke a line could write a line of its own: a heading that looks like the person's memory,
 * or an instruction. A path with a line break, a control or a format character (bidi, zero-width)
 * is therefore given quoted and escaped, as JSON writes a string; any other path as it is.
 */

/** Characters that end a line, or that a reader of the prompt does not see. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** `path` as is, or quoted with its unsafe characters escaped (`"a\n## b"`). Never throws. */
export function promptName(path: string): string {
  if (!UNSAFE.test(path)) return path;
  return JSON.stringify(path).replace(
    /[\p{Cf}\p{Zl}\p{Zp}\u007f-\u009f]/gu,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
