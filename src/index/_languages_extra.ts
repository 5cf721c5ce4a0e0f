/**
 * The chunker's reading of C/C++, PHP and Bash syntax trees (see `_languages.ts` for the
 * contract). C is read with the C++ grammar, which parses it.
 */
import type { Node } from "./_grammars.ts";
import { field, type Heritage, type LanguageSpec, named } from "./_language_spec.ts";

/** Declarators that wrap the one naming a function (`*f(…)`, `&f(…)`, `(f)(…)`). */
const CPP_WRAPPING = new Set([
  "pointer_declarator",
  "reference_declarator",
  "parenthesized_declarator",
  "attributed_declarator",
]);

/** The name of a function definition and, for `Type::name`, the type it belongs to. */
function cppFunctionName(node: Node): { name: string; owner?: string } {
  let declarator = node.childForFieldName("declarator");
  while (declarator && CPP_WRAPPING.has(declarator.type)) {
    declarator = declarator.childForFieldName("declarator") ?? declarator.namedChild(0);
  }
  if (declarator?.type !== "function_declarator") return { name: "" };
  const name = declarator.childForFieldName("declarator");
  if (!name) return { name: "" };
  if (name.type === "qualified_identifier") {
    const scope = (name.childForFieldName("scope")?.text ?? "").replace(/<.*$/s, "");
    return { name: field(name, "name"), owner: scope || undefined };
  }
  return { name: name.text };
}

/** C and C++: structs, classes and unions with a body are classes; prototypes are not chunks. */
export const cpp: LanguageSpec = {
  grammar: "cpp",
  nodeTypes: [
    "class_specifier",
    "struct_specifier",
    "union_specifier",
    "function_definition",
    "preproc_include",
    "call_expression",
  ],
  declaration(node) {
    const body = node.childForFieldName("body");
    switch (node.type) {
      case "class_specifier":
      case "struct_specifier":
      case "union_specifier": {
        const name = field(node, "name");
        // `struct node *make(void)` names a type without declaring one; an anonymous struct
        // takes the name of its `typedef`.
        if (!body) return undefined;
        const typedef = node.parent?.type === "type_definition"
          ? field(node.parent, "declarator")
          : "";
        return { kind: "CLASS", name: name || typedef, node, body };
      }
      case "function_definition": {
        const { name, owner } = cppFunctionName(node);
        return { kind: "FUNCTION", name, node, body, ...(owner ? { owner } : {}) };
      }
    }
    return undefined;
  },
  heritage(node) {
    const clause = named(node).find((child) => child.type === "base_class_clause");
    return named(clause).filter((base) => base.type !== "access_specifier")
      .map((base) => ({ kind: "EXTENDS", name: base.text.replace(/^virtual\s+/, "") }));
  },
  imports(node) {
    if (node.type !== "preproc_include") return [];
    return [field(node, "path").replace(/^["<]|[">]$/g, "")];
  },
  callee: (node) =>
    node.type === "call_expression" ? node.childForFieldName("function")?.text : undefined,
};

const PHP_INCLUDES = new Set([
  "require_expression",
  "require_once_expression",
  "include_expression",
  "include_once_expression",
]);

/** PHP: traits and enums count as classes; `$this->f()` and `self::f()` call the own method. */
export const php: LanguageSpec = {
  grammar: "php",
  nodeTypes: [
    "class_declaration",
    "trait_declaration",
    "enum_declaration",
    "interface_declaration",
    "function_definition",
    "method_declaration",
    "namespace_use_clause",
    ...PHP_INCLUDES,
    "function_call_expression",
    "member_call_expression",
    "scoped_call_expression",
  ],
  declaration(node) {
    const name = field(node, "name");
    const body = node.childForFieldName("body");
    switch (node.type) {
      case "class_declaration":
      case "trait_declaration":
      case "enum_declaration":
        return { kind: "CLASS", name, node, body };
      case "interface_declaration":
        return { kind: "INTERFACE", name, node, body };
      case "function_definition":
      case "method_declaration":
        return { kind: "FUNCTION", name, node, body };
    }
    return undefined;
  },
  heritage(node) {
    const out: Heritage[] = [];
    for (const child of named(node)) {
      if (child.type === "base_clause") {
        for (const base of named(child)) out.push({ kind: "EXTENDS", name: base.text });
      } else if (child.type === "class_interface_clause") {
        for (const base of named(child)) out.push({ kind: "IMPLEMENTS", name: base.text });
      }
    }
    return out;
  },
  imports(node) {
    if (node.type === "namespace_use_clause") {
      const name = named(node).find((child) => child.type !== "namespace_aliasing_clause");
      return name ? [name.text.replace(/^\\/, "")] : [];
    }
    if (!PHP_INCLUDES.has(node.type)) return [];
    const string = named(node).find((child) => child.type === "string");
    return string ? [string.text.replace(/^["']|["']$/g, "")] : [];
  },
  callee(node) {
    switch (node.type) {
      case "function_call_expression":
        return node.childForFieldName("function")?.text.replace(/^\\/, "");
      case "member_call_expression": {
        const object = node.childForFieldName("object")?.text ?? "";
        const name = field(node, "name");
        return object === "$this" ? `this.${name}` : `${object.replace(/^\$/, "")}.${name}`;
      }
      case "scoped_call_expression": {
        const scope = node.childForFieldName("scope")?.text ?? "";
        const name = field(node, "name");
        return scope === "self" || scope === "static" ? `this.${name}` : `${scope}::${name}`;
      }
    }
    return undefined;
  },
};

const BASH_SOURCES = new Set(["source", "."]);

/** Bash: functions, `source`/`.` as imports, and each command inside a function as a call. */
export const bash: LanguageSpec = {
  grammar: "bash",
  nodeTypes: ["function_definition", "command"],
  declaration(node) {
    if (node.type !== "function_definition") return undefined;
    return {
      kind: "FUNCTION",
      name: field(node, "name"),
      node,
      body: node.childForFieldName("body"),
    };
  },
  heritage: () => [],
  imports(node) {
    if (node.type !== "command" || !BASH_SOURCES.has(field(node, "name"))) return [];
    const argument = node.childForFieldName("argument");
    return argument ? [argument.text.replace(/^["']|["']$/g, "")] : [];
  },
  callee: (node) => node.type === "command" ? field(node, "name") || undefined : undefined,
};
