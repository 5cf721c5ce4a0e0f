/** Walks a tree-sitter-bash tree and collects every simple command, however deeply nested. */
import type { Node } from "./_tree_sitter.ts";
import { assignmentRisk } from "./_risk.ts";
import { childrenOf, heredocDelimiter, literalWord, type WordValue, wordValue } from "./_words.ts";

/** One redirection: `{op: ">", target: "out"}`, `{op: "2>", target: "/dev/null"}`, `{op: "<<", target: "EOF"}`. */
export interface Redirect {
  /** The operator with its file descriptor, if one was written. */
  op: string;
  /** The file, descriptor or here-doc delimiter, unquoted; source text when it expands. */
  target: string;
}

/** A simple command as written, before wrappers are peeled. */
export interface RawCommand {
  words: WordValue[];
  assignments: string[];
  redirects: Redirect[];
  /** Bodies of the here-docs it reads. */
  heredocs: string[];
  text: string;
  /** How many substitutions (`$( )`, backticks, `<( )`) it sits inside. */
  depth: number;
}

/** What a walk collects, in source order (a command before the substitutions in it). */
export interface WalkState {
  source: string;
  commands: RawCommand[];
  opaque: string[];
}

const ARITHMETIC_TESTS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"]);

/** Collects the simple commands of a statement (or a whole program) at substitution `depth`. */
export function walkStatement(node: Node, depth: number, state: WalkState): void {
  switch (node.type) {
    case "comment":
      return;
    case "command":
      return walkCommand(node, depth, state);
    case "declaration_command":
    case "unset_command":
    case "test_command":
      return walkKeywordCommand(node, depth, state);
    case "variable_assignment":
    case "variable_assignments":
      addCommand(node, depth, state).assignments.push(...assignmentsOf(node));
      return scanWords(node, depth, state);
    case "redirected_statement":
      return walkRedirected(node, depth, state);
    case "function_definition":
      state.opaque.push("function definition");
      break;
    case "c_style_for_statement":
      if (usesVariables(node)) state.opaque.push("arithmetic on a variable");
      break;
    case "for_statement": {
      // `for PATH in ./bin; do ls; done`: the loop assigns its variable, as `PATH=./bin` would.
      const name = node.childForFieldName("variable")?.text;
      if (name && assignmentRisk([`${name}=$`], { shellOnly: true })) {
        state.opaque.push(`a loop assigns ${name}, which programs may read`);
      }
      break;
    }
  }
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (isStatement(child)) walkStatement(child, depth, state);
    else scanWords(child, depth, state);
  }
}

const STATEMENTS = new Set([
  "command",
  "declaration_command",
  "unset_command",
  "test_command",
  "variable_assignment",
  "variable_assignments",
  "redirected_statement",
  "function_definition",
  "list",
  "pipeline",
  "subshell",
  "compound_statement",
  "negated_command",
  "if_statement",
  "elif_clause",
  "else_clause",
  "while_statement",
  "for_statement",
  "c_style_for_statement",
  "case_statement",
  "case_item",
  "do_group",
  "comment",
]);

function isStatement(node: Node): boolean {
  return STATEMENTS.has(node.type);
}

function addCommand(node: Node, depth: number, state: WalkState): RawCommand {
  const command: RawCommand = {
    words: [],
    assignments: [],
    redirects: [],
    heredocs: [],
    text: node.text,
    depth,
  };
  state.commands.push(command);
  return command;
}

function walkCommand(node: Node, depth: number, state: WalkState): void {
  const command = addCommand(node, depth, state);
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === "variable_assignment") {
      command.assignments.push(child.text);
    } else if (child.type.endsWith("_redirect")) {
      attachRedirect(child, [command], depth, state);
      continue;
    } else if (child.type === "command_name") {
      const name = child.namedChildren[0];
      command.words.push(
        name?.type === "arithmetic_expansion" ? literalWord(name.text) : wordValue(name ?? child),
      );
    } else if (child.type !== "comment") {
      command.words.push(wordValue(child));
    }
    scanWords(child, depth, state);
  }
}

/** `export A=1`, `unset x`, `[[ -f x ]]`: the keyword and each operand become argv. */
function walkKeywordCommand(node: Node, depth: number, state: WalkState): void {
  const command = addCommand(node, depth, state);
  for (const child of childrenOf(node)) {
    if (child.type === "variable_assignment") {
      const [name, value] = [child.namedChildren[0], child.namedChildren[1]];
      const literal = value ? wordValue(value) : literalWord("");
      command.words.push({
        ...literal,
        value: literal.dynamic ? child.text : `${name?.text ?? ""}=${literal.value}`,
      });
    } else if (child.type === "binary_expression" || child.type === "unary_expression") {
      command.words.push(...childrenOf(child).map(wordValue));
    } else {
      command.words.push(wordValue(child));
    }
    scanWords(child, depth, state);
  }
  if (node.type === "test_command" && comparesArithmetically(command.words)) {
    state.opaque.push("arithmetic on a variable");
  }
}

/**
 * `[[ n -gt 1 ]]` and `((n++))` evaluate `n` (and `$n`) as arithmetic; numbers alone are
 * harmless.
 */
function comparesArithmetically(words: readonly WordValue[]): boolean {
  if (words[0]?.value === "((") {
    return words.some((word) => word.dynamic || /[A-Za-z_]/.test(word.value));
  }
  if (!words.some((word) => ARITHMETIC_TESTS.has(word.value))) return false;
  return words.some((word) =>
    word.dynamic ||
    !/^(?:-?\d+|\[\[|\]\]|&&|\|\||!|\(|\)|-[a-z]{1,2})$/.test(word.value)
  );
}

function assignmentsOf(node: Node): string[] {
  if (node.type === "variable_assignment") return [node.text];
  return childrenOf(node).filter((child) => child.type === "variable_assignment").map((c) =>
    c.text
  );
}

/**
 * `body > out`: tree-sitter hangs a redirect after `a && b` or `a | b` on the whole list, but
 * bash gives it to the last command only; after a compound (`{ }`, loops) it applies to all.
 */
function walkRedirected(node: Node, depth: number, state: WalkState): void {
  const body = node.childForFieldName("body");
  const start = state.commands.length;
  if (body) walkStatement(body, depth, state);
  const produced = state.commands.slice(start).filter((command) => command.depth === depth);
  const owners = !body
    ? [addCommand(node, depth, state)]
    : body.type === "list" || body.type === "pipeline"
    ? produced.slice(-1)
    : produced;
  let end = body?.endIndex ?? node.startIndex;
  for (const child of node.namedChildren) {
    if (!child || child.id === body?.id) continue;
    end = Math.max(end, attachRedirect(child, owners, depth, state));
  }
  if (body?.type === "command" && owners.length === 1) {
    owners[0].text = state.source.slice(body.startIndex, end);
  }
}

/** Adds a redirect to its commands; returns where its own text ends (a here-doc's body aside). */
function attachRedirect(node: Node, owners: RawCommand[], depth: number, state: WalkState): number {
  if (node.type === "heredoc_redirect") return attachHeredoc(node, owners, depth, state);
  if (isStatement(node)) {
    walkStatement(node, depth, state);
    return node.startIndex;
  }
  const descriptor = node.children.find((child) => child?.type === "file_descriptor");
  const operator = node.children.find((child) => child && !child.isNamed);
  const target = node.childForFieldName("destination") ??
    node.namedChildren.find((child) => child && child.type !== "file_descriptor");
  const redirect: Redirect = {
    op: `${descriptor?.text ?? ""}${operator?.text ?? ""}`,
    target: target ? wordValue(target).value : "",
  };
  for (const owner of owners) owner.redirects.push(redirect);
  scanWords(node, depth, state);
  return node.endIndex;
}

/** `cat <<EOF | grep x`: tree-sitter nests the rest of the pipeline inside the here-doc node. */
function attachHeredoc(node: Node, owners: RawCommand[], depth: number, state: WalkState): number {
  const operator = node.children.find((child) => child && !child.isNamed)?.text ?? "<<";
  const start = node.children.find((child) => child?.type === "heredoc_start");
  const body = node.children.find((child) => child?.type === "heredoc_body");
  const redirect = { op: operator, target: heredocDelimiter(start?.text ?? "") };
  for (const owner of owners) {
    owner.redirects.push(redirect);
    owner.heredocs.push(body?.text ?? "");
  }
  let end = start?.endIndex ?? node.startIndex;
  for (const child of node.namedChildren) {
    if (!child || child.type === "heredoc_start" || child.type === "heredoc_end") continue;
    if (child.type === "heredoc_body") scanWords(child, depth, state);
    else if (child.type.endsWith("_redirect")) {
      end = Math.max(end, attachRedirect(child, owners, depth, state));
    } else if (isStatement(child)) walkStatement(child, depth, state);
    else scanWords(child, depth, state);
  }
  return end;
}

/** Finds the substitutions inside a word (or any non-statement node) and walks their commands. */
function scanWords(node: Node, depth: number, state: WalkState): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    state.opaque.push(node.type.replace("_", " "));
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (isStatement(child)) walkStatement(child, depth + 1, state);
      else scanWords(child, depth + 1, state);
    }
    return;
  }
  if (node.type === "arithmetic_expansion" && usesVariables(node)) {
    state.opaque.push("arithmetic on a variable");
  }
  const index = node.type === "subscript" ? node.childForFieldName("index") : null;
  if (index && usesVariables(index)) state.opaque.push("arithmetic on a variable");
  const evaluated = node.type === "expansion" ? evaluatedValue(node) : undefined;
  if (evaluated) state.opaque.push(evaluated);
  for (const child of node.namedChildren) if (child) scanWords(child, depth, state);
}

/**
 * Reasons of hidden code that a variable's value holds, which no check of the command line can
 * see (`x='a[$(cmd)]'` set earlier, or read from a file).
 */
export const VALUE_CODE: ReadonlySet<string> = new Set([
  "arithmetic on a variable",
  "indirect expansion",
  "prompt expansion",
]);

/**
 * Why a `${...}` expansion runs what a variable holds, or undefined: a substring's offset and
 * length are arithmetic (`${s:n}`); `${!name}` expands the variable named by `name`'s value,
 * whose subscript bash evaluates (`a[$(cmd)]`); `${x@P}` expands the value as a prompt, with
 * its command substitutions. Listing names or keys (`${!pre*}`, `${!a[@]}`) only reads.
 */
function evaluatedValue(node: Node): string | undefined {
  const parts = node.children.filter((child) => child !== null);
  const colon = parts.findIndex((part) => part.type === ":");
  if (colon >= 0 && parts.slice(colon + 1).some(usesVariables)) return "arithmetic on a variable";
  const listing = /^\$\{!(?:[A-Za-z_][A-Za-z0-9_]*[*@]|[A-Za-z_][A-Za-z0-9_]*\[[*@]\])\}$/;
  if (parts[1]?.type === "!" && !listing.test(node.text)) return "indirect expansion";
  if (parts.some((part, i) => part.type === "@" && parts[i + 1]?.text === "P")) {
    return "prompt expansion";
  }
  return undefined;
}

/**
 * Bash evaluates a variable's value as an expression in arithmetic, and `a[$(cmd)]` there runs
 * `cmd`, so arithmetic that reads a variable can hide code.
 */
function usesVariables(node: Node): boolean {
  if (["variable_name", "simple_expansion", "expansion"].includes(node.type)) return true;
  if (node.type === "word" && /^[A-Za-z_]/.test(node.text)) return true;
  return childrenOf(node).some(usesVariables);
}
