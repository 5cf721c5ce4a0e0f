/** Minimal terminal styling that honours NO_COLOR and plain pipes. */

export interface Style {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const PLAIN: Style = {
  dim: (t) => t,
  bold: (t) => t,
  red: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  cyan: (t) => t,
};

const wrap = (open: number, close: number) => (t: string) => `\x1b[${open}m${t}\x1b[${close}m`;

const ANSI: Style = {
  dim: wrap(2, 22),
  bold: wrap(1, 22),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
};

/** Colour only when writing to a terminal and NO_COLOR is unset (https://no-color.org). */
export function styleFor(isTerminal: boolean, env: { NO_COLOR?: string }): Style {
  return isTerminal && !env.NO_COLOR ? ANSI : PLAIN;
}
