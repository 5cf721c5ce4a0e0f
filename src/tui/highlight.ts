/**
 * Syntax highlighting for code blocks with highlight.js, loaded on demand: nothing here imports
 * it at module load, so the UI starts fast and code renders plain until `loadHighlighter()` has
 * finished.
 */
import type { HighlightApi } from "./highlight_js.d.ts";
import type { Theme } from "./theme.ts";

type Colour = "magenta" | "green" | "yellow" | "gray" | "blue" | "cyan" | "red";

/** highlight.js scope (first class after `hljs-`) to a theme colour; unlisted scopes inherit. */
const SCOPE_COLOURS: Record<string, Colour> = {
  keyword: "magenta",
  "selector-tag": "magenta",
  doctag: "magenta",
  string: "green",
  regexp: "red",
  "selector-attr": "green",
  addition: "green",
  deletion: "red",
  number: "yellow",
  literal: "yellow",
  symbol: "yellow",
  attribute: "yellow",
  variable: "yellow",
  "template-variable": "yellow",
  comment: "gray",
  quote: "gray",
  meta: "gray",
  title: "blue",
  section: "blue",
  name: "blue",
  "selector-id": "blue",
  "selector-class": "blue",
  type: "cyan",
  built_in: "cyan",
  attr: "cyan",
  property: "cyan",
  bullet: "cyan",
  link: "cyan",
};

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#x27;": "'",
  "&#39;": "'",
};

const HTML_PIECE =
  /<span class="([^"]*)">|<\/span>|&(?:amp|lt|gt|quot|#x27|#39);|\n|[^<&\n]+|[<&]/g;

let highlighter: HighlightApi | undefined;
let loading: Promise<void> | undefined;

// Streaming re-renders the same finished blocks many times; highlighting is the costly part.
const CACHE_SIZE = 64;

/**
 * Code longer than this, or with a longer line, renders plain. highlight.js runs on the UI's
 * thread, and some grammars take time that grows with the square of a line's length (one Perl
 * line of 40,000 characters took 2.2 s, of 20,000 0.55 s; 1,000 take about 2 ms); a megabyte of
 * TypeScript took 0.9 s. A model's (or a file's) block could otherwise freeze the screen.
 */
const MAX_HIGHLIGHT_CHARS = 200_000;
const MAX_HIGHLIGHT_LINE = 1_000;
const cache = new Map<string, string[]>();

/**
 * Loads highlight.js (its common languages) once; later calls share the first load. Until it
 * resolves, `highlightCode` returns plain lines. Never rejects: if the import fails, code simply
 * stays plain.
 */
export function loadHighlighter(): Promise<void> {
  loading ??= import("./highlight_loader.js").then(
    (module) => {
      highlighter = module.default;
    },
    () => {},
  );
  return loading;
}

/** Whether `loadHighlighter()` has finished and highlighting is available. */
export function highlighterReady(): boolean {
  return highlighter !== undefined;
}

/**
 * `code` split into lines, coloured when the highlighter is loaded, `theme.color` is on,
 * `language` (a highlight.js name or alias such as "ts" or "py") is known and the code is not too
 * large to colour at once; plain lines otherwise. Each line opens and closes its own colours. Never blocks, never throws.
 */
export function highlightCode(code: string, language: string | undefined, theme: Theme): string[] {
  const hljs = highlighter;
  if (!theme.color || hljs === undefined || !language || !hljs.getLanguage(language)) {
    return code.split("\n");
  }
  const key = `${language}\0${code}`;
  const cached = cache.get(key);
  if (cached) return cached;
  // Only code short enough was cached: the bounds are checked once per block, not per render.
  const plain = code.split("\n");
  if (code.length > MAX_HIGHLIGHT_CHARS || plain.some((l) => l.length > MAX_HIGHLIGHT_LINE)) {
    return plain;
  }
  let lines: string[];
  try {
    lines = htmlToLines(hljs.highlight(code, { language, ignoreIllegals: true }).value, theme);
  } catch {
    lines = plain;
  }
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, lines);
  return lines;
}

/** highlight.js HTML (nested `<span class="hljs-…">`, escaped text) to SGR-coloured lines. */
function htmlToLines(html: string, theme: Theme): string[] {
  const lines: string[] = [];
  const scopes: (Colour | undefined)[] = [];
  let line = "";
  let run = "";
  let runColour: Colour | undefined;
  const flush = () => {
    if (run !== "") line += runColour ? theme[runColour](run) : run;
    run = "";
  };
  const append = (text: string) => {
    const colour = currentColour(scopes);
    if (colour !== runColour) {
      flush();
      runColour = colour;
    }
    run += text;
  };
  for (const [piece, classes] of html.matchAll(HTML_PIECE)) {
    if (classes !== undefined) scopes.push(colourOf(classes));
    else if (piece === "</span>") scopes.pop();
    else if (piece === "\n") {
      flush();
      lines.push(line);
      line = "";
    } else append(ENTITIES[piece] ?? piece);
  }
  flush();
  lines.push(line);
  return lines;
}

function colourOf(classes: string): Colour | undefined {
  const first = classes.split(" ")[0];
  return first.startsWith("hljs-") ? SCOPE_COLOURS[first.slice(5)] : undefined;
}

/** The innermost coloured scope wins; uncoloured scopes (params, sub-languages) inherit. */
function currentColour(scopes: (Colour | undefined)[]): Colour | undefined {
  for (let i = scopes.length - 1; i >= 0; i--) {
    if (scopes[i]) return scopes[i];
  }
  return undefined;
}
