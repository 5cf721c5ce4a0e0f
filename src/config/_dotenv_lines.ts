/**
 * The lines of a `.env` text that `parseEnv` (`node:util`) passes over without a word: not
 * blank, not a `#` comment, not `NAME=value` (`OPENAI_API_KEY sk-…`, `=value`). A quoted value
 * that goes on over lines (`KEY="a` … `b"`) is one assignment, as the parser reads it.
 */

const QUOTES = new Set(['"', "'", "`"]);

/**
 * The 1-based numbers of the lines of `text` that set nothing and are no comment. Never throws.
 */
export function ignoredDotenvLines(text: string): number[] {
  const lines = text.split(/\r?\n/);
  const ignored: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const equal = line.indexOf("=");
    let name = equal < 0 ? "" : line.slice(0, equal).trim();
    if (name.startsWith("export ")) name = name.slice("export ".length).trim();
    if (name === "") {
      ignored.push(i + 1);
      continue;
    }
    const value = line.slice(equal + 1).trimStart();
    const quote = value[0];
    if (!QUOTES.has(quote) || value.includes(quote, 1)) continue;
    // Without its closing quote on this line, the value runs to the next line that has one (and
    // when none does, it is this line's text, quote and all).
    const closing = lines.findIndex((next, j) => j > i && next.includes(quote));
    if (closing > 0) i = closing;
  }
  return ignored;
}
