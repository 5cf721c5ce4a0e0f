/**
 * Instructions as a person can read them. Some characters draw as nothing in a terminal, an
 * editor or a web page, yet a model reads them: a Unicode tag character (U+E0000–U+E007F) is an
 * ASCII letter to it ("ASCII smuggling"), a run of variation selectors can carry any bytes, and
 * zero-width and bidi characters hide or reorder text. So where a person is meant to be able to
 * read what the model is told, because they wrote it, reviewed it or trusted it (a repository's
 * instruction files, skills and templates, an MCP server's tool descriptions), tern removes them
 * before the model sees the text: what it reads is what a person could read there.
 */

import { terminalText } from "./terminal_text.ts";

/**
 * Format characters (`Cf`: tags, zero-width, bidi, the soft hyphen, the BOM) and every other
 * default-ignorable code point (variation selectors, fillers, the combining grapheme joiner).
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, "gu");

/**
 * `text` without the characters that draw as nothing (see the module notes). Visible text,
 * emoji, combining marks and every script stay; an emoji sequence joined by zero-width joiners
 * falls apart into its emoji. Never throws.
 */
export function withoutInvisible(text: string): string {
  return INVISIBLE.test(text) ? text.replace(INVISIBLE_ALL, "") : text;
}

/**
 * Text another program wrote (a server's, a checker's, a child's) as one line of at most `max`
 * characters that a person reads as the model does: escape sequences, controls, bidi and other
 * invisible characters removed, every run of white space (a line break of any kind) one space.
 * Cut before it is cleaned: such text may be megabytes. Never throws.
 */
export function plainLine(text: string, max: number): string {
  const line = withoutInvisible(terminalText(text.slice(0, max * 16))).replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
