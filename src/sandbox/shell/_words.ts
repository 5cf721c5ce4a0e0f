/** The literal value of a shell word, as bash would pass it after quote removal. */
import type { Node } from "./_tree_sitter.ts";

/** Node types whose value is only known when the command runs. */
export const EXPANSIONS: ReadonlySet<string> = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
]);

/** A word's value: the literal text after unquoting, or its source text when it expands. */
export interface WordValue {
  value: string;
  /** Holds an expansion (`$x`, `$(cmd)`, `$((1+x))`): `value` is source text. */
  dynamic: boolean;
  /** Holds an unquoted glob or brace pattern (`*.ts`, `{a,b}`): bash may make it other words. */
  pattern: boolean;
}

/** A word known to be exactly `value`. */
export function literalWord(value: string): WordValue {
  return { value, dynamic: false, pattern: false };
}

/** The non-null children of `node`. */
export function childrenOf(node: Node): Node[] {
  return node.children.filter((child): child is Node => child !== null);
}

/** Whether `node` is or contains an expansion. */
export function hasExpansion(node: Node): boolean {
  return EXPANSIONS.has(node.type) || childrenOf(node).some(hasExpansion);
}

/** Evaluates a word node (word, string, raw_string, ansi_c_string, concatenation, ...). */
export function wordValue(node: Node): WordValue {
  const pattern = isPattern(node);
  if (hasExpansion(node)) return { value: node.text, dynamic: true, pattern };
  return { value: literal(node), dynamic: false, pattern };
}

const GLOB = /(?<!\\)(?:[*?]|\[[^\]]*\])|(?<!\\)\{[^{}]*(?:,|\.\.)[^{}]*\}/;

/** Whether a word's unquoted text holds glob or brace characters (`*.ts`, `a?`, `{a,b}`). */
export function hasPattern(bareText: string): boolean {
  return GLOB.test(bareText);
}

/** Unquoted glob or brace characters: only bare words (and bare parts of a concatenation). */
function isPattern(node: Node): boolean {
  if (node.type === "word") return hasPattern(node.text);
  if (node.type !== "concatenation") return false;
  const bare = childrenOf(node).filter((child) => child.type === "word");
  return hasPattern(bare.map((child) => child.text).join(""));
}

function literal(node: Node): string {
  switch (node.type) {
    case "word":
      return unescapeBare(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "string":
      return unescapeDouble(node.text.replace(/^\$?"/, "").replace(/"$/, ""));
    case "ansi_c_string":
      return decodeAnsiC(node.text.slice(2, -1));
    case "concatenation":
      return childrenOf(node).map(literal).join("");
    default:
      return node.text;
  }
}

/** Removes unquoted backslashes: `\r\m` is `rm`, a backslash-newline disappears. */
export function unescapeBare(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_, ch: string) => ch === "\n" ? "" : ch);
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, ch: string) => ch === "\n" ? "" : ch);
}

const ANSI_C: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

function decodeAnsiC(text: string): string {
  return text.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (whole, esc: string) => {
      if (/^[xuU]/.test(esc)) return String.fromCodePoint(parseInt(esc.slice(1), 16));
      if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
      if (esc.startsWith("c")) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return ANSI_C[esc] ?? whole;
    },
  );
}

/** A here-doc delimiter without its quotes: `'EOF'` is `EOF`. */
export function heredocDelimiter(text: string): string {
  return text.replace(/['"\\]/g, "");
}
