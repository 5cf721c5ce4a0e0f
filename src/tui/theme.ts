/**
 * Colours and emphasis for the interactive UI, as functions from text to styled text. With
 * colour off (NO_COLOR, or not a terminal) every function returns its text unchanged, so the
 * rest of the UI never checks.
 */

/** SGR styling; each function closes what it opens, so styles nest. */
export interface Theme {
  readonly color: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  inverse(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
  gray(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) =>
  text === "" ? "" : `\x1b[${open}m${text}\x1b[${close}m`;

const same = (text: string) => text;

const ANSI_THEME: Theme = {
  color: true,
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  italic: sgr(3, 23),
  underline: sgr(4, 24),
  inverse: sgr(7, 27),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
  gray: sgr(90, 39),
};

const PLAIN_THEME: Theme = {
  color: false,
  bold: same,
  dim: same,
  italic: same,
  underline: same,
  inverse: same,
  red: same,
  green: same,
  yellow: same,
  blue: same,
  magenta: same,
  cyan: same,
  gray: same,
};

/** The colour theme, or the plain one when `color` is false. */
export function themeFor(color: boolean): Theme {
  return color ? ANSI_THEME : PLAIN_THEME;
}

/** Colour on a terminal unless NO_COLOR is set to anything (https://no-color.org). */
export function wantsColor(isTerminal: boolean, noColor: string | undefined): boolean {
  return isTerminal && (noColor === undefined || noColor === "");
}
