/** Walks a tree-sitter-bash tree and collects every simple command, however deeply nested. */
import type { Node } from "./_tree_sitter.ts";
import { assignmentRisk } from "./_risk.ts";
import { readDelimiter } from "./_heredoc.ts";
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
    descriptorVariable(child, state);
    scanWords(child, depth, state);
  }
}

/**
 * `{NAME}<file`, the operator right after the brace, opens a descriptor and assigns its number
 * to NAME: after `true {PATH}<f`, `ls` is looked up in the folder `11`. tree-sitter reads
 * `{PATH}` as a word of the command.
 */
function descriptorVariable(node: Node, state: WalkState): void {
  const match = /^\{([A-Za-z_][A-Za-z0-9_]*)(\[.*\])?\}$/s.exec(node.text);
  if (!match || !/[<>]/.test(state.source[node.endIndex] ?? "")) return;
  if (match[2] !== undefined) state.opaque.push("arithmetic on a variable");
  else if (assignmentRisk([`${match[1]}=$`], { shellOnly: true })) {
    state.opaque.push(`a redirection assigns ${match[1]}, which programs may read`);
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
    } else if (TEST_EXPRESSIONS.has(child.type)) {
      command.words.push(...testWords(child));
    } else {
      command.words.push(wordValue(child));
    }
    descriptorVariable(child, state);
    scanWords(child, depth, state);
  }
  if (node.type === "test_command" && comparesArithmetically(node, command.words)) {
    state.opaque.push("arithmetic on a variable");
  }
}

/** Expressions of `[[ ]]` and `[ ]`, which nest: `[[ -n x && ( -v a ) ]]`. */
const TEST_EXPRESSIONS = new Set([
  "binary_expression",
  "unary_expression",
  "parenthesized_expression",
]);

/**
 * The words of a test expression at any depth, so that `-v 'a[$(cmd)]'` or `a -gt 1` nested
 * under `&&`, `-a`, `!` or parentheses is seen as if written alone.
 */
function testWords(node: Node): WordValue[] {
  return childrenOf(node).flatMap((child) =>
    TEST_EXPRESSIONS.has(child.type) ? testWords(child) : [wordValue(child)]
  );
}

/**
 * `[[ n -gt 1 ]]` and `((n++))` evaluate `n` (and `$n`) as arithmetic, at any depth of the
 * expression (`[[ -f a && n -gt 1 ]]`); numbers alone are harmless.
 */
function comparesArithmetically(node: Node, words: readonly WordValue[]): boolean {
  if (words[0]?.value === "((") {
    return words.some((word) => word.dynamic || /[A-Za-z_]/.test(word.value));
  }
  if (!words.some((word) => ARITHMETIC_TESTS.has(word.value))) return false;
  const tests = arithmeticTests(node);
  if (tests.length === 0) {
    // A shape not read here: every word must be a number or an operator.
    return words.some((word) =>
      word.dynamic ||
      !/^(?:-?\d+|\[\[|\]\]|&&|\|\||!|\(|\)|-[a-z]{1,2})$/.test(word.value)
    );
  }
  return tests.some((test) =>
    childrenOf(test).some((operand) =>
      operand.isNamed && !ARITHMETIC_TESTS.has(operand.text) && !isNumber(operand)
    )
  );
}

/** The expressions under `node`, at any depth, whose operator is an arithmetic test. */
function arithmeticTests(node: Node): Node[] {
  return childrenOf(node).flatMap((child) => {
    if (!TEST_EXPRESSIONS.has(child.type)) return [];
    const own = childrenOf(child).some((part) => ARITHMETIC_TESTS.has(part.text));
    return [...(own ? [child] : []), ...arithmeticTests(child)];
  });
}

function isNumber(node: Node): boolean {
  const word = wordValue(node);
  return !word.dynamic && /^-?\d+$/.test(word.value);
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
    if (child.type === "heredoc_body") {
      // A body tree-sitter left whole is text to it; bash still expands it unless quoted.
      const quoted = readDelimiter(start?.text ?? "")?.quoted ?? true;
      if (!quoted && child.childCount === 0) checkText(child, state);
      scanWords(child, depth, state);
    } else if (child.type.endsWith("_redirect")) {
      end = Math.max(end, attachRedirect(child, owners, depth, state));
    } else if (isStatement(child)) walkStatement(child, depth, state);
    else scanWords(child, depth, state);
  }
  return end;
}

/** Finds the substitutions inside a word (or any non-statement node) and walks their commands. */
function scanWords(node: Node, depth: number, state: WalkState): void {
  if (TEXT_LEAVES.has(node.type) && node.childCount === 0) checkText(node, state);
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
  const assigned = node.type === "expansion" ? assignedName(node) : undefined;
  if (assigned) state.opaque.push(`an expansion assigns ${assigned}, which programs may read`);
  for (const child of node.namedChildren) if (child) scanWords(child, depth, state);
}

/** Why a substitution in text that tree-sitter did not parse is code nobody has read. */
const UNREAD = "a substitution the parser reads as text";

/**
 * Reasons of hidden code that no check of the command line can see: what a variable's value
 * holds (`x='a[$(cmd)]'` set earlier, or read from a file), or a substitution the parser left as
 * text.
 */
export const VALUE_CODE: ReadonlySet<string> = new Set([
  "arithmetic on a variable",
  "indirect expansion",
  "prompt expansion",
  UNREAD,
]);

/** Nodes tree-sitter gives as plain text that bash still expands. */
const TEXT_LEAVES = new Set(["word", "string_content", "heredoc_content"]);

/**
 * tree-sitter leaves some substitutions as text that bash runs: backticks in a `${x:-…}` default,
 * an unquoted here-doc body that holds backticks, or a `<<-` body that starts with `$(cmd)`. A
 * backtick, `$(` or `$[` not after a backslash in such text is code the walk never saw.
 */
function checkText(node: Node, state: WalkState): void {
  if (/`|\$[(\[]/.test(node.text.replace(/\\[\s\S]/g, ""))) state.opaque.push(UNREAD);
}

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
 * The name `${NAME:=value}` or `${NAME=value}` assigns when not known to be harmless: after
 * `unset PATH`, `: ${PATH:=bin}; ls` runs the workspace's `bin/ls`, as `PATH=bin; ls` would,
 * and `: ${BASH_CMDS["ls"]:=/bin/rm}; ls x` runs `rm x`.
 */
function assignedName(node: Node): string | undefined {
  const parts = childrenOf(node);
  if (!parts.some((part) => part.type === "=" || part.type === ":=")) return undefined;
  // `${BASH_CMDS["ls"]:=/bin/rm}` assigns an element: the array's name decides.
  const array = parts.find((part) => part.type === "subscript")?.namedChildren[0];
  const name = parts.find((part) => part.type === "variable_name")?.text ?? array?.text;
  return name && assignmentRisk([`${name}=$`], { shellOnly: true }) ? name : undefined;
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
