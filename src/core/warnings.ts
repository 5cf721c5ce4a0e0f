/**
 * Where tern's warnings to the person go. By default a `tern: warning:` line on stderr; while
 * the interactive screen is up, the front end takes them (`showWarningsIn`), since a line
 * written to stderr then lands wherever the cursor is, in the middle of the drawn screen.
 *
 * A warning often quotes what a repository wrote (a file or folder name, an MCP server's name),
 * so its text is made safe for the terminal and kept to one line: a line break in a name shows
 * as ↵ instead of starting a line that could pass for one of tern's own.
 */
import { terminalText, visibleText } from "./terminal_text.ts";

/** Receives one warning line, already made visible (without the `tern: warning: ` prefix). */
export type ShowWarning = (text: string) => void;

let shown: ShowWarning | undefined;

/**
 * Tells the person `text` as one warning line: escape sequences and controls removed, line
 * breaks and invisible characters shown (`visibleText(terminalText(text))`). Never throws.
 */
export function warnPerson(text: string): void {
  const line = warningLine(text);
  if (shown !== undefined) return shown(line);
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(`tern: warning: ${line}\n`));
  } catch {
    // A closed stderr has no one to tell.
  }
}

/** `text` as {@linkcode warnPerson} shows it: one line, safe for the terminal. */
export function warningLine(text: string): string {
  return visibleText(terminalText(text));
}

/**
 * Sends warnings to `show` (undefined: back to stderr) until the returned function is called,
 * which restores where they went before.
 */
export function showWarningsIn(show: ShowWarning | undefined): () => void {
  const before = shown;
  shown = show;
  return () => {
    shown = before;
  };
}
