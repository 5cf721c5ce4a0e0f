/**
 * Splits a shell command into the simple commands it runs, with tree-sitter-bash, so rules and
 * the classifier judge every part (`a && evil`, `$(evil)`, `xargs rm`) and not just the first.
 */
import { heredocEnd, readDelimiter, startLineEnd } from "./_heredoc.ts";
import { findHiddenCode } from "./_hidden_code.ts";
import { scanPlain } from "./_plain.ts";
import { overBudget, type ShellAnalysis, type SimpleCommand } from "./_analysis.ts";
import { parsesApart } from "./parse_place.ts";
import { loadBashParser, type Node, type Parser } from "./_tree_sitter.ts";
import {
  type RawCommand,
  type Redirect,
  VALUE_CODE,
  type WalkState,
  walkStatement,
} from "./_walk.ts";
import { commandName, peelWrappers } from "./_wrappers.ts";

export type { Redirect, ShellAnalysis, SimpleCommand };
export { commandName };

/** Code hidden in `bash -c '…'` inside `eval '…'` … is analyzed this many levels deep. */
const MAX_NESTING = 4;

/**
 * How long the parser may take over one command line, its hidden code included, before the
 * command is refused as unparsable. The grammar's time grows with the square of some inputs
 * (100 KB of here-doc starts took 10 s, 200 KB 40 s), during which the parsing thread does
 * nothing else; a command a person or model writes, even a megabyte, parses within a second or
 * two (bench/results/first_request_limits.md, fifteenth session).
 */
export const PARSE_BUDGET_MS = 5_000;

/**
 * Parses `command` as bash. Never throws for bad input: a syntax error comes back as
 * `{ok: false}` naming the line and column. A plain command line (see `_plain.ts`) is read
 * without the parser, with the same result; the grammar is loaded on first use otherwise.
 */
export async function analyzeShell(command: string): Promise<ShellAnalysis> {
  return analyzePlain(command) ?? await analyzeShellParsed(command);
}

/**
 * `command` analysed without the parser, or undefined when it is not a plain command line or
 * hides code (`bash -c '…'`) that needs the parser. Exported for the test that holds it equal
 * to the parser's analysis.
 */
export function analyzePlain(command: string): ShellAnalysis | undefined {
  const state = scanPlain(command);
  return state === undefined ? undefined : finish(state, undefined);
}

/**
 * Analyses `command` with the parser only, never through {@linkcode analyzePlain}: in the
 * shell parser process once tern chose it (parse_place.ts), else here.
 * `budgetMs` (default {@linkcode PARSE_BUDGET_MS}) is for tests.
 */
export async function analyzeShellParsed(
  command: string,
  budgetMs = PARSE_BUDGET_MS,
): Promise<ShellAnalysis> {
  if (parsesApart()) {
    const { shellParserProcess } = await import("./parser_process.ts");
    return await shellParserProcess().analyze(command, budgetMs);
  }
  return await analyzeShellHere(command, budgetMs);
}

/** Analyses `command` with the parser, in this process (what the shell parser process runs). */
export async function analyzeShellHere(
  command: string,
  budgetMs = PARSE_BUDGET_MS,
): Promise<ShellAnalysis> {
  const parser = await loadBashParser();
  return analyzeSource(parser, command, 0, performance.now() + budgetMs, budgetMs);
}

function analyzeSource(
  parser: Parser,
  source: string,
  nesting: number,
  deadline: number,
  budgetMs: number,
): ShellAnalysis {
  // bash reads a carriage return as part of a word; the grammar as a line's end, so to it
  // `echo \<CR><LF>rm x` is one `echo` where bash runs `rm x` too.
  if (source.includes("\r")) {
    return {
      ok: false,
      error: "Cannot parse shell command: it holds a carriage return (\\r), which bash reads " +
        "as part of a word: end its lines with \\n alone",
    };
  }
  // tree-sitter calls back between its steps, each well under 100 ms even on such inputs.
  const tree = parser.parse(source, null, { progressCallback: () => performance.now() > deadline });
  if (!tree) {
    // Else the shared parser's next parse would go on with this text where it stopped.
    parser.reset();
    return overBudget(budgetMs);
  }
  try {
    const error = findSyntaxError(tree.rootNode) ?? findHeredocMismatch(tree.rootNode, source);
    if (error) return { ok: false, error: `Cannot parse shell command: ${error}` };
    const state: WalkState = { source, commands: [], opaque: [] };
    walkStatement(tree.rootNode, 0, state);
    return finish(state, (code) => {
      if (nesting >= MAX_NESTING) return "hidden code nested too deeply";
      return analyzeSource(parser, code, nesting + 1, deadline, budgetMs);
    })!;
  } finally {
    tree.delete();
  }
}

/**
 * The analysis of the commands a walk collected; code hidden in them goes to `nested` (its
 * analysis, or a reason it was not analysed). Without `nested`, undefined when there is any.
 */
function finish(
  state: WalkState,
  nested: ((code: string) => ShellAnalysis | string) | undefined,
): ShellAnalysis | undefined {
  const commands: SimpleCommand[] = [];
  const opaque = [...state.opaque];
  // A variable's value can hold `a[$(cmd)]`, which arithmetic runs.
  const unseen: string[] = state.opaque.filter((reason) => VALUE_CODE.has(reason));
  for (const raw of state.commands) {
    const peeled = peelWrappers(raw.words);
    const hidden = findHiddenCode(peeled.words, raw.heredocs);
    opaque.push(...peeled.opaque, ...hidden.reasons);
    unseen.push(...peeled.opaque, ...hidden.unseen);
    commands.push(toSimpleCommand(raw, peeled));
    for (const code of hidden.code) {
      if (nested === undefined) return undefined;
      const analysis = nested(code);
      if (typeof analysis === "string" || !analysis.ok) {
        const reason = typeof analysis === "string" ? analysis : "unparsable hidden code";
        opaque.push(reason);
        unseen.push(reason);
        continue;
      }
      opaque.push(...analysis.opaque);
      unseen.push(...analysis.unseen);
      commands.push(...analysis.commands.map((command) => ({ ...command, inSubstitution: true })));
    }
  }
  return { ok: true, commands, opaque: [...new Set(opaque)], unseen: [...new Set(unseen)] };
}

function toSimpleCommand(raw: RawCommand, peeled: ReturnType<typeof peelWrappers>): SimpleCommand {
  return {
    argv: peeled.words.map((word) => word.value),
    expands: peeled.words.map((word) => word.dynamic || word.pattern),
    assignments: [...raw.assignments, ...peeled.assignments],
    redirects: raw.redirects,
    wrappers: peeled.wrappers,
    chdir: peeled.chdir,
    text: raw.text,
    inSubstitution: raw.depth > 0,
  };
}

/** The first ERROR or MISSING node, described; undefined when the tree is clean. */
function findSyntaxError(root: Node): string | undefined {
  if (!root.hasError) return undefined;
  const cursor = root.walk();
  try {
    for (;;) {
      const node = cursor.currentNode;
      if (node.isMissing || node.type === "ERROR") return describeError(node);
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return "syntax error";
      }
    }
  } finally {
    cursor.delete();
  }
}

/**
 * A here-doc whose body the parser ends elsewhere than bash does (see `_heredoc.ts`), described;
 * undefined when every here-doc agrees. The commands after such a body would be judged wrongly.
 */
function findHeredocMismatch(root: Node, source: string): string | undefined {
  for (const node of root.descendantsOfType("heredoc_redirect")) {
    if (!node) continue;
    const child = (type: string) => node.children.find((c) => c?.type === type) ?? undefined;
    const start = child("heredoc_start");
    const at = `line ${node.startPosition.row + 1}`;
    const delimiter = start && readDelimiter(start.text);
    if (!start || !delimiter) {
      return `the here-doc delimiter ${JSON.stringify(start?.text ?? "")} at ${at} is not ` +
        `a plain word: write it as 'EOF'`;
    }
    const lineEnd = startLineEnd(source, start.endIndex);
    const stripTabs = node.children.some((c) => c?.text === "<<-");
    const end = lineEnd === undefined
      ? undefined
      : heredocEnd(source, lineEnd + 1, delimiter, stripTabs);
    const last = child("heredoc_end");
    const body = child("heredoc_body");
    if (
      lineEnd === undefined || end === undefined || last === undefined ||
      last.startIndex < end.lineStart || last.endIndex > end.lineEnd ||
      (body !== undefined && (body.startIndex < lineEnd || body.endIndex > end.wordStart))
    ) {
      return `bash may end the here-doc at ${at} elsewhere than it appears to end: keep the ` +
        `rest of its first line plain and its delimiter ${delimiter.word} alone on a line`;
    }
  }
  return undefined;
}

function describeError(node: Node): string {
  const text = node.text.replace(/^[ \t]+/, "");
  const offset = node.text.length - text.length;
  const at = `line ${node.startPosition.row + 1}, column ${node.startPosition.column + 1 + offset}`;
  if (node.isMissing) return `missing "${node.type}" at ${at}`;
  if (/^(\$?'|\$?"|`)/.test(text)) return `unterminated quote at ${at}`;
  const near = text.split("\n")[0].slice(0, 20);
  return near ? `unexpected "${near}" at ${at}` : `unexpected end of input at ${at}`;
}
