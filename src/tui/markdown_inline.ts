/**
 * Inline Markdown (marked's inline tokens) to one styled string for the Markdown renderer.
 *
 * marked decodes numeric character references while it lexes (`&#27;` becomes ESC, `&#x202E;`
 * a bidi override), after the text was sanitized: so every text a token carries passes
 * `cleanText()` again here, before tern's own styling is added.
 */
import type { MarkedToken, Token } from "marked";
import { cleanText } from "./format.ts";
import type { Theme } from "./theme.ts";

/** Styles already open around the text, so nested emphasis is not closed early. */
export interface InlineStyle {
  bold?: boolean;
  italic?: boolean;
  /** Colour for plain text runs (a heading's); code spans and links keep their own. */
  paint?: (text: string) => string;
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
};

const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]+));/g;

/**
 * Text of a token as shown: character references decoded (`decodeEntities`), then made safe
 * for the terminal (`cleanText()`: no escape sequence, control or bidi character, whatever a
 * reference decoded to). Never throws.
 */
export function plainText(text: string): string {
  return cleanText(decodeEntities(text));
}

/** `text` with HTML character references (`&amp;`, `&#39;`, `&#x1F600;`) decoded. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(ENTITY, (whole, decimal, hex, name) => {
    if (name !== undefined) return NAMED_ENTITIES[name] ?? whole;
    const code = decimal !== undefined ? Number(decimal) : parseInt(hex, 16);
    return code > 31 && code <= 0x10ffff && (code < 0x7f || code > 0x9f)
      ? String.fromCodePoint(code)
      : whole;
  });
}

/**
 * Inline tokens as one string with SGR styles. A soft line break becomes a space (the paragraph
 * is re-wrapped to the screen), a hard break (`br`) stays a newline.
 */
export function renderInline(
  tokens: readonly Token[] | undefined,
  theme: Theme,
  style: InlineStyle = {},
): string {
  if (!tokens) return "";
  let out = "";
  for (const token of tokens) out += renderToken(token as MarkedToken, theme, style);
  return out;
}

function renderToken(token: MarkedToken, theme: Theme, style: InlineStyle): string {
  switch (token.type) {
    case "text":
      return token.tokens
        ? renderInline(token.tokens, theme, style)
        : paint(softBreaks(plainText(token.text)), style);
    case "escape":
      return paint(cleanText(token.text), style);
    case "strong": {
      const inner = renderInline(token.tokens, theme, { ...style, bold: true });
      return style.bold ? inner : theme.bold(inner);
    }
    case "em": {
      const inner = renderInline(token.tokens, theme, { ...style, italic: true });
      return style.italic ? inner : theme.italic(inner);
    }
    case "codespan":
      return theme.cyan(softBreaks(cleanText(token.text)));
    case "del": {
      const inner = renderInline(token.tokens, theme, style);
      return theme.color ? `\x1b[9m${inner}\x1b[29m` : `~~${inner}~~`;
    }
    case "link": {
      const text = renderInline(token.tokens, theme, style);
      const shown = theme.blue(text);
      return sameTarget(token.text, token.href)
        ? shown
        : `${shown} ${theme.dim(`(${cleanText(token.href)})`)}`;
    }
    case "image": {
      const alt = token.text ? `[image: ${plainText(token.text)}]` : "[image]";
      return `${theme.dim(alt)} ${theme.dim(`(${cleanText(token.href)})`)}`;
    }
    case "br":
      return "\n";
    case "checkbox":
      return token.checked ? "[x] " : "[ ] ";
    case "html":
      return paint(softBreaks(cleanText(token.text)), style);
    default:
      return "raw" in token ? softBreaks(cleanText(token.raw)) : "";
  }
}

function paint(text: string, style: InlineStyle): string {
  return style.paint ? style.paint(text) : text;
}

function softBreaks(text: string): string {
  return text.includes("\n") ? text.replace(/[ \t]*\n[ \t]*/g, " ") : text;
}

function sameTarget(text: string, href: string): boolean {
  return text === href || `mailto:${text}` === href;
}
