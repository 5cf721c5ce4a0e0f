/**
 * The contract between the chunker and each language's reading of its syntax tree, and the two
 * tree helpers every language uses.
 */
import type { Node } from "./_grammars.ts";

/** A declaration found at a node. */
export interface Declaration {
  kind: "CLASS" | "INTERFACE" | "FUNCTION";
  name: string;
  /** Where the signature starts (the declaration itself, without wrappers such as `export`). */
  node: Node;
  /** The body; the signature ends where it starts. */
  body: Node | null;
  /** The type a function belongs to when declared outside it (a Go receiver, a Rust impl). */
  owner?: string;
}

/** A base type named in a class or interface declaration. */
export interface Heritage {
  kind: "EXTENDS" | "IMPLEMENTS";
  name: string;
}

/** A name an import statement binds in a file: `local` stands for `name` of `module`. */
export interface Binding {
  local: string;
  /** The module as written (`./util.js`). */
  module: string;
  /** The exported name, or "*" for a namespace import (`import * as ns`). */
  name: string;
}

/** One language's reading of its syntax tree. */
export interface LanguageSpec {
  /** The grammar's file name part: `tree-sitter-<grammar>.wasm`. */
  grammar: string;
  /**
   * Every node type the functions below react to: on a node of any other type `declaration`,
   * `callee` and `scope` give undefined and `imports` and `bindings` nothing, so the chunker
   * looks at no other node (tests/index/node_types_test.ts checks it).
   */
  nodeTypes: readonly string[];
  declaration(node: Node): Declaration | undefined;
  heritage(node: Node): Heritage[];
  /** Module names an import node imports, as written. */
  imports(node: Node): string[];
  /** The names an import node binds, to resolve calls to them (languages that say so). */
  bindings?(node: Node): Binding[];
  /** The callee as written when `node` is a call. */
  callee(node: Node): string | undefined;
  /** The type a block's functions belong to (a Rust `impl`), else undefined. */
  scope?(node: Node): { owner: string; heritage: Heritage[] } | undefined;
  /** A doc string inside the body (Python), preferred to a comment above. */
  innerDoc?(body: Node): string | undefined;
}

export function field(node: Node, name: string): string {
  return node.childForFieldName(name)?.text ?? "";
}

export function named(node: Node | null | undefined): Node[] {
  if (!node) return [];
  return node.namedChildren.filter((child): child is Node => child !== null);
}
